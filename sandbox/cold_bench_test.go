package sandbox

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/guest/builtin"
)

// BenchmarkColdCall is one read_file call of the built-in module right
// after the last call's background work is done ("warm", as the other call
// benchmarks time it), against the same call after unrelated work ("cold"),
// alternately in the same run. The unrelated work, as a model's response
// is read and decoded and other agents run between two rounds, is one of:
//
//   - idle: 2 ms idle;
//   - touch: 32 MiB the process holds written on the call's goroutine,
//     then 2 ms idle;
//   - other-cores: 16 MiB it holds written by each of two goroutines (on
//     both cores), then 2 ms idle;
//   - fresh: 16 MiB newly allocated and written by each of two goroutines,
//     then 2 ms idle;
//   - idle-20ms: 20 ms idle, nothing else. On a virtual machine a call
//     after this long idle is as slow as one after fresh: what makes a call
//     cold there is how long its core was away from the call's memory (or
//     busy in the kernel faulting pages in), more than the garbage
//     collector; BENCHMARKS.md.
//
// Reported: each one's median and 90th percentile, and cold over warm.
//
//	go test ./sandbox -run '^$' -bench ColdCall -benchtime 300x
func BenchmarkColdCall(b *testing.B) {
	ctx := context.Background()
	_, p, req := readFileCall(b)
	held := make([]byte, 32<<20)
	work := map[string]func(){
		"idle":        func() {},
		"touch":       func() { touch(held) },
		"other-cores": func() { onTwo(func(i int) { touch(held[i<<24 : (i+1)<<24]) }) },
		"fresh":       func() { onTwo(func(int) { touch(make([]byte, 16<<20)) }) },
		"idle-20ms":   func() { time.Sleep(18 * time.Millisecond) },
	}
	for _, kind := range []string{"idle", "touch", "other-cores", "fresh", "idle-20ms"} {
		b.Run(kind, func(b *testing.B) {
			r, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
			must(b, err)
			defer r.Close(ctx)
			m, err := r.Compile(ctx, builtin.Module)
			must(b, err)
			call := func() time.Duration {
				start := time.Now()
				if res, err := m.Call(ctx, p, req); err != nil || res.Response.Error != "" {
					b.Fatal(err, res.Response.Error)
				}
				return time.Since(start)
			}
			call()
			var warm, cold []time.Duration
			b.ResetTimer()
			for range b.N {
				r.bg.Wait()
				warm = append(warm, call())
				r.bg.Wait()
				work[kind]()
				time.Sleep(2 * time.Millisecond)
				cold = append(cold, call())
			}
			b.StopTimer()
			w, c := percentiles(b, "warm", warm), percentiles(b, "cold", cold)
			b.ReportMetric(c/w, "cold/warm")
		})
	}
}

// touch writes a byte of every cache line of buf.
func touch(buf []byte) {
	for i := 0; i < len(buf); i += 64 {
		buf[i]++
	}
}

// onTwo runs fn(0) and fn(1) on two goroutines and waits for both.
func onTwo(fn func(int)) {
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}

// percentiles reports the median and 90th percentile of d as NAME-p50-µs
// and NAME-p90-µs, and returns the median in microseconds.
func percentiles(b *testing.B, name string, d []time.Duration) float64 {
	slices.Sort(d)
	p50 := float64(d[len(d)/2].Nanoseconds()) / 1e3
	b.ReportMetric(p50, name+"-p50-µs")
	b.ReportMetric(float64(d[len(d)*9/10].Nanoseconds())/1e3, name+"-p90-µs")
	return p50
}
