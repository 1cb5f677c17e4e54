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

// BenchmarkRound is a whole round as a run takes it on a file store: the
// model's turn (the script model), its calls journaled and run, their
// results journaled, the round committed, with every sync that takes. A
// run of b.N rounds is timed and divided by b.N; "read" rounds make one
// read_file call, "write" rounds one write_file call (settled, applied,
// its changes kept), "read3" rounds three read_file calls at once.
// syncs/round counts the fsyncs and fdatasyncs (the run's start and end
// included, spread over its rounds).
//
//	go test ./host -run '^$' -bench Round -benchtime 200x
func BenchmarkRound(b *testing.B) {
	calls := map[string]string{
		"read":  `[{name: read_file, input: {path: f.txt}}]`,
		"write": `[{name: write_file, input: {path: w%d.txt, content: x}}]`,
		"read3": `[{name: read_file, input: {path: f.txt}}, {name: read_file, input: {path: f.txt}}, {name: read_file, input: {path: f.txt}}]`,
	}
	for _, kind := range []string{"read", "write", "read3"} {
		b.Run(kind, func(b *testing.B) {
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
			eng, _ := fileEngine(b)
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
