package host

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Pause of an agent whose call awaits a decision says so, names the call
// and how to decide it; it once said the agent had stopped during a run
// and to resume it, which only asks again. The CLI and the API print
// this error as it is.
func TestPauseOfAgentAwaitingApprovalSaysHowToDecide(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: ap
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
approvals: [{tool: write_file, action: ask}]
`, "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: done\n")
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "ap", Prompt: "go"})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	err = eng.Pause(context.Background(), "ap")
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("pause: %v, want ErrNotRunning", err)
	}
	for _, want := range []string{"awaiting approval of call_1_0 (write_file)", "cairn approve ap call_1_0", "cairn deny ap call_1_0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("pause says %q, want it to say %q", err, want)
		}
	}
	t.Log(err)
	if strings.Contains(err.Error(), "stopped during a run") {
		t.Errorf("pause says %q: the agent did not stop mid-run, it waits for a decision", err)
	}
}

// A new prompt to an agent whose call awaits a decision names the call
// and the commands that decide it: resume alone would only ask again.
func TestRunOfAgentAwaitingApprovalSaysHowToDecide(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: ap
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
approvals: [{tool: write_file, action: ask}]
`, "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: done\n")
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "ap", Prompt: "go"})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	_, err = eng.Run(context.Background(), RunOptions{ID: "ap", Prompt: "more"})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("a new prompt: %v, want ErrInterrupted", err)
	}
	for _, want := range []string{"awaiting approval of call_1_0 (write_file)", "cairn approve ap call_1_0", "then give it the prompt"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal says %q, want it to say %q", err, want)
		}
	}
}
