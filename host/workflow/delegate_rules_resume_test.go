package workflow_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a delegation step's agent met its parent file's approval
// rules when it was made, but a `cairn workflow resume` continued it with
// its own rules alone: a call the parent's rules deny ran. The resume
// binds it by its parent file's rules again.
func TestDelegationStepResumedMeetsItsParentsRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)) }
	write("kid.yaml", "turns:\n  - tool_calls: [{name: read_file, input: {path: in.txt}}]\n"+
		"  - tool_calls: [{name: write_file, input: {path: out.txt, content: escaped}}]\n  - text: done\n")
	write("in.txt", "in")
	write("team.yaml", "name: team\nmodel: {provider: script}\ntools: [{module: builtin}]\n"+
		"approvals: [{tool: read_file, action: ask}, {tool: write_file, action: deny}]\n"+
		"agents:\n  - name: kid\n    description: reads, then writes\n    model: {provider: script, script: kid.yaml}\n    tools: [{module: builtin}]\n")
	write("flow.yaml", "name: f\nworkspace: .\nsteps:\n  - {name: d, delegate: kid, parent: team.yaml, task: go}\n")
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	eng := engine(t, checkpoint.NewMemStore())
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-rules"})
	must(t, err)
	if res.Status != checkpoint.StatusApproval {
		t.Fatalf("run: %s (%s); want the read awaiting approval, as the parent's rule asks", res.Status, res.Reason)
	}
	must(t, eng.Decide(t.Context(), workflow.StepAgent("wf-rules", "d"), "call_1_0", host.Decision{Approved: true}))
	res, err = workflow.Resume(context.Background(), eng, "wf-rules", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusDone {
		t.Fatalf("resume: %s (%s)", res.Status, res.Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Fatal("the resumed step wrote out.txt, which its parent file's rules deny")
	}
}
