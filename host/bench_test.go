package host

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/checkpoint"
)

// BenchmarkToolCall is one call of the built-in read_file as the host
// makes it (the call's overlay, the sandbox call, its reads and effects
// listed), alone and as a model's turn of one call (which the host runs
// as it runs a turn of several), against the sandbox call alone (the
// baseline), interleaved in the same run, each after 2 ms idle. p50-µs is
// the median of each; x-sandbox and turn-x-sandbox, the host's call and
// the turn over the sandbox's call.
//
//	go test ./host -run '^$' -bench ToolCall -benchtime 1000x
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	ts, ws, view := readFileToolset(b)
	call := checkpoint.ToolCall{ID: "c1", Name: "read_file", Input: `{"path":"f.txt"}`}
	t := ts.tools["read_file"]
	mod, err := t.module.Wait(ctx)
	if err != nil {
		b.Fatal(err)
	}
	req := abi.Request{ABI: abi.Version, Tool: "read_file", Input: call.Input, Workspace: abi.WorkspaceDir}
	kinds := []struct {
		name string
		call func()
	}{
		{"sandbox", func() {
			if r, err := mod.Call(ctx, t.policy(ws), req); err != nil || r.Response.Error != "" {
				b.Fatal(err, r.Response.Error)
			}
		}},
		{"host", func() {
			if res := ts.runCall(ctx, view, call); res.isError {
				b.Fatal(res.output)
			}
		}},
		{"turn", func() {
			if res := ts.runCalls(ctx, view, []checkpoint.ToolCall{call}, func(checkpoint.ToolCall) {}, func(*callResult) {}); res[0].isError {
				b.Fatal(res[0].output)
			}
		}},
	}
	times := make([][]time.Duration, len(kinds))
	for _, k := range kinds {
		k.call()
	}
	b.ResetTimer()
	for range b.N {
		for i, k := range kinds {
			time.Sleep(2 * time.Millisecond)
			start := time.Now()
			k.call()
			times[i] = append(times[i], time.Since(start))
		}
	}
	b.StopTimer()
	p50 := make([]float64, len(kinds))
	for i, k := range kinds {
		slices.Sort(times[i])
		p50[i] = float64(times[i][len(times[i])/2].Nanoseconds()) / 1e3
		b.ReportMetric(p50[i], k.name+"-p50-µs")
	}
	b.ReportMetric(p50[1]/p50[0], "x-sandbox")
	b.ReportMetric(p50[2]/p50[0], "turn-x-sandbox")
}
