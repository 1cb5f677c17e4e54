package checkpoint

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkWorkBesideSync times a unit of CPU work on its own (alone) and
// while another goroutine writes a kilobyte and fdatasyncs it in a loop
// (beside-sync), as the agents of one process do. Run with -cpu 1,2 on a
// machine of two cores or more: with one P, a goroutine waiting in
// fdatasync holds the P until the runtime's monitor takes it back, so the
// work is slowed by far more than the sync's own CPU; with one more P it
// is not (RATIONALE.md, "One more P than cores").
//
//	go test ./checkpoint -run '^$' -bench WorkBesideSync -benchtime 20000x -cpu 1,2
func BenchmarkWorkBesideSync(b *testing.B) {
	for _, beside := range []bool{false, true} {
		name := "alone"
		if beside {
			name = "beside-sync"
		}
		b.Run(name, func(b *testing.B) {
			var stop atomic.Bool
			var syncs atomic.Int64
			var wg sync.WaitGroup
			if beside {
				f, err := os.Create(filepath.Join(b.TempDir(), "log"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				if _, err := f.Write(make([]byte, 1<<20)); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				wg.Go(func() {
					buf := make([]byte, 1024)
					for i := int64(0); !stop.Load(); i++ {
						if _, err := f.WriteAt(buf, i%1024*1024); err != nil {
							b.Error(err)
							return
						}
						if err := syncData(f); err != nil {
							b.Error(err)
							return
						}
						syncs.Add(1)
					}
				})
			}
			b.ResetTimer()
			start := time.Now()
			sink := 0
			for range b.N {
				sink += work()
			}
			elapsed := time.Since(start)
			stop.Store(true)
			wg.Wait()
			workSink.Store(int64(sink))
			b.ReportMetric(float64(syncs.Load())/elapsed.Seconds(), "syncs/s")
		})
	}
}

var workSink atomic.Int64

// work is a few microseconds of arithmetic.
func work() int {
	x := 0
	for i := range 10000 {
		x += i * i
	}
	return x
}
