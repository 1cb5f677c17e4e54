package workflow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a delegation step's agent was bound by its parent file's
// approval rules and sandbox limits, but not by its max_tokens: under
// team.yaml, with max_tokens 40, kid listed the workspace round after
// round, and its own sub-agent too, as if team had no budget. The parent
// file's max_tokens, max_cost and max_time bound the step's agent and
// the sub-agents below it as a delegation's parent's bind its child: the
// step pauses before a round the budget cannot afford, saying whose it is
// and to resume the workflow with --max-tokens, which goes on; the step's
// agent resumed by itself is bound the same.
func TestDelegationStepBoundByItsParentFilesBudget(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)) }
	list := "  - tool_calls: [{name: list_dir, input: {path: .}}]\n"
	write("kid.yaml", "turns:\n  - tool_calls: [{name: delegate, input: {agent: grand, task: list it}}]\n"+list+list+list+"  - text: listed\n")
	write("grand.yaml", "turns:\n"+list+list+list+list+"  - text: listed\n")
	write("team.yaml", "name: team\nmodel: {provider: script}\ntools: [{module: builtin}]\nlimits: {max_tokens: 40}\n"+
		"agents:\n  - name: kid\n    description: lists, and has it listed\n    model: {provider: script, script: kid.yaml}\n"+
		"    tools: [{module: builtin, only: [list_dir]}]\n"+
		"    agents:\n      - name: grand\n        description: lists\n        model: {provider: script, script: grand.yaml}\n"+
		"        tools: [{module: builtin, only: [list_dir]}]\n")
	write("flow.yaml", "name: f\nworkspace: .\nsteps:\n  - {name: d, delegate: kid, parent: team.yaml, task: go}\n")
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	store := checkpoint.NewMemStore()
	eng := engine(t, store)
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf"})
	must(t, err)
	kid := workflow.StepAgent("wf", "d")
	if res.Status != checkpoint.StatusPaused || !strings.Contains(res.Reason, "max_tokens") || !strings.Contains(res.Reason, "team.yaml") ||
		!strings.Contains(res.Reason, "`cairn workflow resume wf` with that flag") {
		k, _ := store.Read(kid)
		t.Fatalf("run: %s (%s), kid at round %d using %d tokens; want paused by team.yaml's max_tokens of 40, saying to resume the workflow with --max-tokens",
			res.Status, res.Reason, k.State.Round, k.State.Usage.Total())
	}
	list1, err := store.List()
	must(t, err)
	for _, s := range list1 {
		if s.Status == checkpoint.StatusDone {
			t.Errorf("agent %s ran to its end past team.yaml's budget", s.ID)
		}
	}
	// Resumed by itself, the sub-agent below the step's agent is bound by
	// team.yaml's budget too, read from what the step's agent keeps.
	var grand string
	for _, s := range list1 {
		if s.Parent == kid {
			grand = s.ID
		}
	}
	g, err := store.Read(grand)
	must(t, err)
	res1, err := eng.Resume(context.Background(), host.ResumeOptions{ID: grand})
	if err != nil || res1.Status != host.StatusPaused || !strings.Contains(res1.Reason, "team.yaml") {
		t.Fatalf("resume of %s alone: %+v, %v; want paused by team.yaml's budget", grand, res1, err)
	}
	if after, _ := store.Read(grand); after.State.Round != g.State.Round {
		t.Fatalf("%s alone went from round %d to %d past team.yaml's budget", grand, g.State.Round, after.State.Round)
	}
	before, err := store.Read(kid)
	must(t, err)
	alone, err := eng.Resume(context.Background(), host.ResumeOptions{ID: kid})
	if err != nil || alone.Status != host.StatusPaused || !strings.Contains(alone.Reason, "max_tokens") {
		t.Fatalf("resume of the step's agent alone: %+v, %v; want paused by team.yaml's budget", alone, err)
	}
	if after, _ := store.Read(kid); after.State.Round != before.State.Round {
		t.Fatalf("the step's agent alone went from round %d to %d past team.yaml's budget", before.State.Round, after.State.Round)
	}
	res, err = workflow.Resume(context.Background(), eng, "wf", workflow.Options{Limits: host.RunLimits{MaxTokens: 100000}})
	must(t, err)
	if res.Status != checkpoint.StatusDone {
		t.Fatalf("resume with --max-tokens: %s (%s)", res.Status, res.Reason)
	}
}
