//go:build unix

package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/checkpoint"
)

// BenchmarkAgents is many agents in one engine, each taking rounds of one
// read_file call (the script model), on a file store with a journal per
// agent ("journal") or group commit ("group"). b.N is the rounds of all
// agents together; rounds/s is what they reach at once, cpu-ms/round the
// process's CPU time over them, sys-ms/round the kernel's part of it.
//
//	go test ./host -run '^$' -bench Agents -benchtime 4000x
func BenchmarkAgents(b *testing.B) {
	for _, agents := range []int{1, 8, 64} {
		for _, commit := range []string{"journal", "group"} {
			b.Run(fmt.Sprintf("%d/%s", agents, commit), func(b *testing.B) {
				benchAgents(b, agents, fileStore(b, commit == "group"), false)
			})
		}
	}
}

// BenchmarkAgentsHost is BenchmarkAgents with a tool that answers at once
// (testdata/wat/answer.wat, a module of a few instructions, given the
// read_file tool's name), so that what is left of a round is the host's:
// the journal, the state, events, the file pool, the model, and making an
// instance of a tiny module.
//
//	go test ./host -run '^$' -bench AgentsHost -benchtime 4000x
func BenchmarkAgentsHost(b *testing.B) {
	for _, agents := range []int{1, 8, 64} {
		for _, commit := range []string{"journal", "group"} {
			b.Run(fmt.Sprintf("%d/%s", agents, commit), func(b *testing.B) {
				benchAgents(b, agents, fileStore(b, commit == "group"), true)
			})
		}
	}
}

// answerModule writes the answer module, with a manifest naming its one
// tool read_file, into dir and returns its file name.
func answerModule(b *testing.B, dir string) string {
	wasm, err := os.ReadFile(filepath.Join("testdata", "wat", "answer.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	wasm, err = abi.WithManifest(wasm, abi.Manifest{ABI: abi.Version, Tools: []abi.Tool{{
		Name:        "read_file",
		Description: "Answers a line at once.",
		InputSchema: `{"type":"object","properties":{"path":{"type":"string"}}}`,
		Idempotent:  true,
	}}})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "answer.wasm"), wasm, 0o644); err != nil {
		b.Fatal(err)
	}
	return "answer.wasm"
}

// fileStore is a file store in a new directory, with group commit or a
// journal per agent.
func fileStore(b *testing.B, group bool) checkpoint.Store {
	var opts []checkpoint.FileStoreOption
	if group {
		opts = append(opts, checkpoint.WithGroupCommit())
	}
	store, err := OpenStore(b.TempDir(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	return store
}

func benchAgents(b *testing.B, agents int, store checkpoint.Store, answer bool) {
	rounds := max(1, (b.N+agents-1)/agents)
	var script strings.Builder
	script.WriteString("turns:\n")
	for range rounds {
		script.WriteString("  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n")
	}
	script.WriteString("  - text: done\n")
	tools := "{module: builtin, only: [read_file]}"
	if answer {
		tools = "{module: answer.wasm}"
	}
	af := agentIn(b, `
name: bench
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [`+tools+`]
limits: {max_rounds: 1000000}
`, script.String())
	if answer {
		answerModule(b, af.Dir)
	}
	if err := os.WriteFile(filepath.Join(af.Dir, "workspace", "f.txt"), []byte("a line\n"), 0o644); err != nil {
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
	start, cpu, sys := time.Now(), processCPU(), processSys()
	for i := range agents {
		wg.Go(func() {
			// go tool pprof -tagfocus phase=rounds.
			pprof.Do(context.Background(), pprof.Labels("phase", "rounds"), func(ctx context.Context) {
				res, err := eng.Run(ctx, RunOptions{Agent: af, ID: fmt.Sprintf("a%d", i), Prompt: "go"})
				if err == nil && (res.Status != StatusDone || res.Rounds != rounds+1) {
					err = fmt.Errorf("agent %d: %s after %d rounds: %s", i, res.Status, res.Rounds, res.Reason)
				}
				errs <- err
			})
		})
	}
	wg.Wait()
	elapsed, cpu, sys := time.Since(start), processCPU()-cpu, processSys()-sys
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
	b.ReportMetric(float64(sys.Microseconds())/1000/total, "sys-ms/round")
}

// processSys is the process's system CPU time so far (within
// processCPU): the kernel's share, its fdatasyncs among it.
func processSys() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Stime.Nano())
}
