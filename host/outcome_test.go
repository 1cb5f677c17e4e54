package host

import (
	"strings"
	"testing"
)

// Regression: a call whose write was refused (stale, or made first by an
// earlier call of the round) was shown as "ok" in its tool_end event, and
// as ✓ in the terminal. Its outcome is now "conflict", each call has one
// tool_end, and calls that changed nothing keep "ok".
func TestRefusedWriteIsAConflict(t *testing.T) {
	af := agentIn(t, `
name: conflict
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, `
turns:
  - tool_calls:
      - {name: write_file, input: {path: same.txt, content: first}}
      - {name: write_file, input: {path: same.txt, content: second}}
      - {name: list_dir, input: {}}
  - text: done
`)
	res, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	got := map[string][]Outcome{}
	for _, e := range events {
		if e.Type == EventToolEnd {
			got[e.Call.ID] = append(got[e.Call.ID], e.Call.Outcome)
			if e.Call.Outcome == OutcomeConflict && !strings.Contains(e.Call.Output, "changed it first") {
				t.Fatalf("the conflict's output does not say why: %q", e.Call.Output)
			}
		}
	}
	want := map[string]Outcome{"call_1_0": OutcomeOK, "call_1_1": OutcomeConflict, "call_1_2": OutcomeOK}
	for id, o := range want {
		if len(got[id]) != 1 || got[id][0] != o {
			t.Fatalf("tool_end outcomes of %s: %v, want one %q (all: %v)", id, got[id], o, got)
		}
	}
}
