package main

import (
	"strings"
	"testing"
)

// awaitingAgent runs an agent whose one call, a write, waits for a
// person's approval, and returns its store; the agent's id is asks.
func awaitingAgent(t *testing.T) (store string) {
	t.Helper()
	agentFile, store := scriptAgent(t, `name: asks
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
approvals: [{tool: write_file, action: ask}]
`, "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: hi}}]\n  - text: wrote it\n")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "asks", "-f", agentFile, "write"); code != exitApproval {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	return store
}

// Regression: `cairn log` of an agent whose round awaits a decision said
// the round "was interrupted; cairn resume continues it", and did not name
// the call that waits: a resume alone only asks again. It names the call,
// its input, and the commands that decide it.
func TestLogOfAgentAwaitingApprovalNamesTheCall(t *testing.T) {
	store := awaitingAgent(t)
	_, out, _ := cairn(t, "log", "--store", store, "asks")
	if !strings.Contains(out, "round 1 awaits a decision on call_1_0 write_file") || !strings.Contains(out, "a.txt") ||
		!strings.Contains(out, "cairn approve") || strings.Contains(out, "was interrupted") {
		t.Fatalf("log:\n%s", out)
	}
}

// Regression: after `cairn approve` of the one call that waited, `cairn
// ls` and `cairn show` still said "awaiting approval of call_1_0", though
// a second approve was refused: nothing waited for a person any more. The
// agent is listed paused, and show says a resume carries the decision out.
func TestDecidedAgentIsShownPaused(t *testing.T) {
	store := awaitingAgent(t)
	if code, _, errOut := cairn(t, "approve", "--store", store, "asks", "call_1_0"); code != exitDone {
		t.Fatalf("approve: exit %d: %s", code, errOut)
	}
	if got := lsStatusOf(t, store)["asks"]; got != "paused" {
		t.Errorf("ls says %q, want paused", got)
	}
	_, out, _ := cairn(t, "show", "--store", store, "asks")
	if !strings.Contains(out, "status     paused · its calls that awaited approval are decided; `cairn resume asks`") {
		t.Errorf("show:\n%s", out)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "asks"); code != exitDone {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
}
