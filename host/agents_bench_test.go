//go:build unix

package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// BenchmarkAgents is many agents in one engine, each taking rounds of one
// read_file call (the script model), on a file store with a journal per
// agent ("journal") or group commit ("group"). b.N is the rounds of all
// agents together; rounds/s is what they reach at once, cpu-ms/round the
// process's CPU time over them.
//
//	go test ./host -run '^$' -bench Agents -benchtime 4000x
func BenchmarkAgents(b *testing.B) {
	for _, agents := range []int{1, 8, 64} {
		for _, commit := range []string{"journal", "group"} {
			b.Run(fmt.Sprintf("%d/%s", agents, commit), func(b *testing.B) {
				benchAgents(b, agents, commit == "group")
			})
		}
	}
}

func benchAgents(b *testing.B, agents int, group bool) {
	rounds := max(1, (b.N+agents-1)/agents)
	var script strings.Builder
	script.WriteString("turns:\n")
	for range rounds {
		script.WriteString("  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n")
	}
	script.WriteString("  - text: done\n")
	af := agentIn(b, `
name: bench
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: 1000000}
`, script.String())
	if err := os.WriteFile(filepath.Join(af.Dir, "workspace", "f.txt"), []byte("a line\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var opts []checkpoint.FileStoreOption
	if group {
		opts = append(opts, checkpoint.WithGroupCommit())
	}
	store, err := OpenStore(b.TempDir(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close(context.Background())
	errs := make(chan error, agents)
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	for i := range agents {
		wg.Go(func() {
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: fmt.Sprintf("a%d", i), Prompt: "go"})
			if err == nil && (res.Status != StatusDone || res.Rounds != rounds+1) {
				err = fmt.Errorf("agent %d: %s after %d rounds: %s", i, res.Status, res.Rounds, res.Reason)
			}
			errs <- err
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu
	b.StopTimer()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	total := float64(agents * (rounds + 1))
	b.ReportMetric(total/elapsed.Seconds(), "rounds/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/total, "cpu-ms/round")
}
