package host

import (
	"context"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/internal/interleave"
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
	call := conversation.ToolCall{ID: "c1", Name: "read_file", Input: `{"path":"f.txt"}`}
	t := ts.tools["read_file"]
	mod, err := t.module.Wait(ctx)
	if err != nil {
		b.Fatal(err)
	}
	req := abi.Request{ABI: abi.Version, Tool: "read_file", Input: call.Input, Workspace: abi.WorkspaceDir}
	kinds := []interleave.Way{
		{Name: "sandbox", Call: func() {
			if r, err := mod.Call(ctx, t.policy(ws), req); err != nil || r.Response.Error != "" {
				b.Fatal(err, r.Response.Error)
			}
		}},
		{Name: "host", Call: func() {
			if res := ts.runCall(ctx, view, call); res.isError {
				b.Fatal(res.output)
			}
		}},
		{Name: "turn", Call: func() {
			if res := ts.runCalls(func(conversation.ToolCall) context.Context { return ctx }, view, []conversation.ToolCall{call}, func(conversation.ToolCall) {}, func(*callResult) {}); res[0].isError {
				b.Fatal(res[0].output)
			}
		}},
	}
	p50 := interleave.Medians(b, kinds, func() { time.Sleep(2 * time.Millisecond) })
	b.ReportMetric(p50[1]/p50[0], "x-sandbox")
	b.ReportMetric(p50[2]/p50[0], "turn-x-sandbox")
}
