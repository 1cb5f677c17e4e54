package host

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/filepool"
)

// BenchmarkRecordCall is what recording a finished call for verify adds
// to it, on a file store: a call that read nothing ("none"); one that
// read one small file, recorded by digest ("digest", the default), which
// the recording reads again, or as the sandbox hashed it while the call
// read it in one pass ("digest-as-read"); and with `record: reads`, the
// content kept too: already stored by this run, as a file read every
// round is ("same"), or new to the store, stored crash-atomically ("new").
//
//	go test ./host -run '^$' -bench RecordCall -benchtime 2000x
func BenchmarkRecordCall(b *testing.B) {
	for _, kind := range []string{"none", "digest", "digest-as-read", "same", "new"} {
		b.Run(kind, func(b *testing.B) {
			ws := b.TempDir()
			store, err := checkpoint.OpenFileStore(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			mode := RecordReads
			if kind == "digest" || kind == "digest-as-read" {
				mode = RecordDigests
			}
			cache := newBlobCache(store, mode)
			s := &sight{module: "sha256:00", policy: "sha256:00"}
			if kind != "none" {
				s.reads = []string{"f.txt"}
			}
			if kind == "digest-as-read" {
				s.whole = map[string]wholeFile{"f.txt": {filepool.HashBytes([]byte("a line\n")), 0o644}}
			}
			os.WriteFile(filepath.Join(ws, "f.txt"), []byte("a line\n"), 0o644)
			res := &callResult{output: "1\ta line\n"}
			b.ResetTimer()
			for i := range b.N {
				if kind == "new" || kind == "digest" {
					b.StopTimer()
					os.WriteFile(filepath.Join(ws, "f.txt"), []byte(fmt.Sprintf("line %d\n", i)), 0o644)
					b.StartTimer()
				}
				if _, err := s.recording(1, ws, cache, res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
