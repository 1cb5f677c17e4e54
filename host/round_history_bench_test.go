//go:build unix

package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRoundHistory is a round of one read_file call, as
// BenchmarkRound's "read", taken by an agent that already has a history
// of 10, 1,000 or 10,000 messages: a run takes the rounds that make the
// history (untimed), pauses at its max_rounds, and a resume takes b.N more
// (timed). cpu-ms/round is the process's CPU time (user and system, every
// goroutine) over the timed rounds.
//
//	go test ./host -run '^$' -bench RoundHistory -benchtime 500x
func BenchmarkRoundHistory(b *testing.B) {
	for _, history := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprint(history), func(b *testing.B) {
			eng, warm := pausedWithHistory(b, history, b.N, "  - text: done\n")
			ctx := context.Background()
			var res *Result
			var err error
			b.ResetTimer()
			cpu := processCPU()
			// The label lets a CPU profile show the timed rounds alone:
			// go tool pprof -tagfocus phase=rounds.
			pprof.Do(ctx, pprof.Labels("phase", "rounds"), func(ctx context.Context) {
				res, err = eng.Resume(ctx, ResumeOptions{ID: "bench", Limits: RunLimits{MaxRounds: warm + b.N + 10}})
			})
			cpu = processCPU() - cpu
			b.StopTimer()
			if err != nil || res.Status != StatusDone {
				b.Fatalf("run: %+v, %v", res, err)
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/round")
		})
	}
}

// pausedWithHistory is an engine with agent "bench" paused after the
// rounds (warm, each one read_file call) that make a history of that many
// messages, and a script of more such turns, then end.
func pausedWithHistory(b *testing.B, history, more int, end string) (eng *Engine, warm int) {
	b.Helper()
	warm = history / 2 // each round adds a turn and its result
	script := "turns:\n" + strings.Repeat("  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n", warm+more) + end
	af := agentIn(b, fmt.Sprintf(`
name: bench
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: %d}
`, warm), script)
	if err := os.WriteFile(filepath.Join(af.Dir, "workspace", "f.txt"), []byte("a line\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	eng, _ = fileEngine(b)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "bench", Prompt: "go"})
	if err != nil || res.Status != StatusPaused || res.Rounds != warm {
		b.Fatalf("warm-up run: %+v, %v", res, err)
	}
	return eng, warm
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
