package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// midTree is a lead without limits whose sub-agent mid, with a token
// budget of its own, hands a task to alpha, which lists the workspace in
// four rounds.
const midTree = `name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: mid
    description: hands the listing on
    model: {provider: script, script: mid.yaml}
    tools: [{module: builtin, only: [list_dir]}]
    limits: {max_tokens: 40}
    agents:
      - name: alpha
        description: lists the workspace, again and again
        model: {provider: script, script: alpha.yaml}
        tools: [{module: builtin, only: [list_dir]}]
`

// Regression: a sub-agent's own max_tokens bounded its own turns, and its
// children's only once the round that delegated to them committed: under
// mid, with max_tokens 40, alpha ran all its rounds, its tokens past mid's
// budget, which stopped mid only after. A sub-agent's max_tokens, max_cost
// and max_time bound its subtree as the top-level agent's bound the tree:
// alpha stops before the round mid cannot afford, and the reason says to
// raise mid's limit, then resume the top. Resumed by itself, alpha is
// bound by mid's budget too.
func TestSubAgentsBudgetBoundsItsOwnSubAgents(t *testing.T) {
	eng, store := fileEngine(t)
	list := "  - tool_calls: [{name: list_dir, input: {path: .}}]\n"
	af := agentIn(t, midTree, "turns:\n  - tool_calls: [{name: delegate, input: {agent: mid, task: list it}}]\n  - text: listed\n")
	must(t, os.WriteFile(filepath.Join(af.Dir, "mid.yaml"), []byte("turns:\n  - tool_calls: [{name: delegate, input: {agent: alpha, task: list it}}]\n  - text: listed\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(af.Dir, "alpha.yaml"), []byte("turns:\n"+list+list+list+"  - text: listed\n"), 0o644))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	mid := childID("lead", "mid", "call_1_0")
	alpha := childID(mid, "alpha", "call_1_0")
	a, err := store.Read(alpha)
	must(t, err)
	m, err := store.Read(mid)
	must(t, err)
	if used := a.State.Usage.Total() + m.State.Usage.Total(); a.State.Status == "done" {
		t.Fatalf("alpha ran to its end, %d rounds, mid's tree using %d tokens of its 40; lead: %+v", a.State.Round, used, res)
	}
	want := "`cairn resume " + mid + "` with --max-tokens"
	if res.Status != StatusPaused || !strings.Contains(res.Reason, "the tree of "+mid+" reached max_tokens") || !strings.Contains(res.Reason, want) ||
		!strings.HasSuffix(res.Reason, "`cairn resume lead`") {
		t.Fatalf("lead: %+v; want it paused by mid's budget, saying %s, then `cairn resume lead`", res, want)
	}
	// Resumed by itself, alpha is bound by mid's budget as under it.
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: alpha})
	if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "the tree of "+mid+" reached max_tokens") ||
		!strings.Contains(res.Reason, want) || !strings.HasSuffix(res.Reason, "`cairn resume lead`") {
		t.Fatalf("resume of alpha alone: %+v, %v; want mid's budget to pause it, saying %s, then `cairn resume lead`", res, err, want)
	}
	if after, _ := store.Read(alpha); after.State.Round != a.State.Round {
		t.Fatalf("alpha went from round %d to %d past mid's budget", a.State.Round, after.State.Round)
	}
	if res, err := eng.Resume(context.Background(), ResumeOptions{ID: mid, Limits: RunLimits{MaxTokens: 10000}}); err != nil || res.Status != StatusDone {
		t.Fatalf("resume of mid with more: %+v, %v", res, err)
	}
	if res, err := eng.Resume(context.Background(), ResumeOptions{ID: "lead"}); err != nil || res.Status != StatusDone {
		t.Fatalf("resume of lead: %+v, %v", res, err)
	}
}
