package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// BenchmarkRoundTravel is BenchmarkRound's read and write rounds with the
// workspace kept in the store (the default) and without it
// (WorkspaceLimit.Off), in one run: what keeping a past each round and
// each written file as a blob costs on a file store.
//
//	go test ./host -run '^$' -bench RoundTravel -benchtime 200x
func BenchmarkRoundTravel(b *testing.B) {
	calls := map[string]string{
		"read":  `[{name: read_file, input: {path: f.txt}}]`,
		"write": `[{name: write_file, input: {path: w%d.txt, content: x}}]`,
	}
	for _, kind := range []string{"read", "write"} {
		for _, off := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/off=%v", kind, off), func(b *testing.B) {
				var script strings.Builder
				script.WriteString("turns:\n")
				for i := range b.N {
					c := calls[kind]
					if strings.Contains(c, "%d") {
						c = fmt.Sprintf(c, i)
					}
					fmt.Fprintf(&script, "  - tool_calls: %s\n", c)
				}
				script.WriteString("  - text: done\n")
				af := agentIn(b, `
name: bench
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file, write_file]}]
limits: {max_rounds: 100000}
`, script.String())
				if err := os.WriteFile(filepath.Join(af.Dir, "workspace", "f.txt"), []byte("a line\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				store, err := OpenStore(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store, WorkspaceLimit: WorkspaceLimit{Off: off}})
				if err != nil {
					b.Fatal(err)
				}
				defer eng.Close(context.Background())
				var syncs atomic.Int64
				stop := syncpoint.Observe(func(string) { syncs.Add(1) })
				defer stop()
				b.ResetTimer()
				res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "bench", Prompt: "go"})
				b.StopTimer()
				b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/round")
				if err != nil || res.Status != StatusDone {
					b.Fatalf("run: %+v, %v", res, err)
				}
			})
		}
	}
}
