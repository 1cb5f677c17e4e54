package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const fourRounds = `
turns:
  - tool_calls: [{name: list_dir, input: {}}]
  - tool_calls: [{name: list_dir, input: {}}]
  - tool_calls: [{name: list_dir, input: {}}]
  - tool_calls: [{name: list_dir, input: {}}]
  - text: done
`

func limitAgent(limits string) string {
	return `
name: limited
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: ` + limits + "\n"
}

// Each limit pauses the run with its reason and the flag that raises it.
// Resuming without raising it pauses again at once; raising it goes on,
// and rounds, tokens and tool calls carry over: the agent ends exactly
// where an unlimited run ends.
func TestLimitsPauseAndCarryOver(t *testing.T) {
	_, unlimited := collect(t, RunOptions{Agent: agentIn(t, limitAgent("{}"), fourRounds), Prompt: "go"})
	want := unlimited[len(unlimited)-1]
	tests := []struct {
		limits, reason string
		raise          RunLimits
	}{
		{"{max_rounds: 2}", "reached max_rounds (2 rounds since the prompt); resume with --max-rounds", RunLimits{MaxRounds: 10}},
		{"{max_tokens: 20}", "reached max_tokens", RunLimits{MaxTokens: 1 << 20}},
	}
	for _, tt := range tests {
		t.Run(tt.limits, func(t *testing.T) {
			eng, _ := fileEngine(t)
			af := agentIn(t, limitAgent(tt.limits), fourRounds)
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "l", Prompt: "go"})
			if err != nil || res.Status != StatusPaused || !strings.HasPrefix(res.Reason, tt.reason) {
				t.Fatalf("run: %+v, %v; want paused: %s", res, err, tt.reason)
			}
			again, err := eng.Resume(context.Background(), ResumeOptions{ID: "l"})
			if err != nil || again.Status != StatusPaused || again.Rounds != res.Rounds || again.Usage != res.Usage {
				t.Fatalf("resume without raising: %+v, %v; want paused at round %d", again, err, res.Rounds)
			}
			done, err := eng.Resume(context.Background(), ResumeOptions{ID: "l", Limits: tt.raise})
			if err != nil || done.Status != StatusDone {
				t.Fatalf("resume with the limit raised: %+v, %v", done, err)
			}
			if done.Rounds != want.Round || done.Usage != *want.Usage || done.ToolCalls != 4 {
				t.Fatalf("ended at round %d, usage %+v, %d calls; an unlimited run ends at %d, %+v, 4",
					done.Rounds, done.Usage, done.ToolCalls, want.Round, *want.Usage)
			}
		})
	}
}

// Time counts from the start of each run: a run paused by max_time gets
// its full time again on resume, and so takes one more round each time,
// even when starting took longer than max_time (a 1 ns max_time here).
// The calls are todo_write's, which cairn carries out at once: max_time
// ends a call that takes longer than it (max_time_call_test.go).
func TestMaxTimeRestartsOnResume(t *testing.T) {
	eng, _ := fileEngine(t)
	agent := `
name: slow
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
todos: true
limits: {max_time: 1ns}
`
	script := "turns:\n" + strings.Repeat("  - tool_calls: [{name: todo_write, input: {todos: [{content: wait, status: pending}]}}]\n", 3) + "  - text: done\n"
	af := agentIn(t, agent, script)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "s", Prompt: "go"})
	if err != nil || res.Status != StatusPaused || res.Rounds != 1 || !strings.Contains(res.Reason, "max_time") {
		t.Fatalf("run: %+v, %v; want paused by max_time after round 1", res, err)
	}
	for round := 2; round <= 3; round++ {
		res, err = eng.Resume(context.Background(), ResumeOptions{ID: "s"})
		if err != nil || res.Status != StatusPaused || res.Rounds != round {
			t.Fatalf("resume: %+v, %v; want one more round (%d), then paused by max_time", res, err, round)
		}
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "s", Limits: RunLimits{MaxTime: Duration(time.Hour)}})
	if err != nil || res.Status != StatusDone || res.Rounds != 4 {
		t.Fatalf("resume with an hour: %+v, %v", res, err)
	}
}

// max_cost pauses once the priced usage reaches it.
func TestMaxCost(t *testing.T) {
	srv := openAIServer(t)
	agent := fmt.Sprintf(`
name: priced
model: {provider: openai, name: m, base_url: %s/v1, price: {input: 1, output: 2}}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_cost: 0.00002}
`, srv.URL)
	eng, _ := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: agentIn(t, agent, ""), ID: "p", Prompt: "go"})
	if err != nil || res.Status != StatusPaused || res.Rounds != 1 || !strings.Contains(res.Reason, "reached max_cost ($0.0000 spent") {
		t.Fatalf("run: %+v, %v; want paused by max_cost after round 1", res, err)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "p", Limits: RunLimits{MaxCost: 1}})
	if err != nil || res.Status != StatusDone || res.Usage.CostMicroUSD != 42 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
}

// A call whose arguments are larger than its tool may read ends with an
// error result that says so, before the tool runs; the run goes on.
// (A 20 MiB argument once reached the tool cut short.)
func TestArgumentsTooLarge(t *testing.T) {
	af := agentIn(t, strings.Replace(hostileAgent, "memory: 64MiB}", "memory: 64MiB, stdin: 64KiB}", 1),
		"turns:\n  - tool_calls: [{name: echo, input: {text: "+strings.Repeat("a", 100<<10)+", n: 1}}]\n  - text: done\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	ends := toolEnds(events)
	if res.Status != StatusDone || len(ends) != 1 {
		t.Fatalf("%s: %s, %d tool results", res.Status, res.Reason, len(ends))
	}
	if c := ends[0]; c.Outcome != OutcomeError || !strings.Contains(c.Output, "request too large") || !strings.Contains(c.Output, "the tool may read 65536") {
		t.Fatalf("the call's result: %s %.200s", c.Outcome, c.Output)
	}
}
