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

// Regression: a delegation step's agent keeps its parent file in its
// definition, and every resume binds it by that; but `cairn workflow
// resume` read the parent file from disk again before it continued the
// agent, so a parent file removed (or edited until it no longer read)
// since the step began failed a step that needed nothing of it.
func TestDelegationStepResumedWithoutItsParentFileOnDisk(t *testing.T) {
	for _, tc := range []struct{ name, parent string }{{"removed", ""}, {"broken", "name: [\n"}} {
		t.Run(tc.name, func(t *testing.T) {
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
			store, err := checkpoint.OpenFileStore(t.TempDir())
			must(t, err)
			eng := engine(t, store)
			res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-gone"})
			must(t, err)
			if res.Status != checkpoint.StatusApproval {
				t.Fatalf("run: %s (%s); want the read awaiting approval, as the parent's rule asks", res.Status, res.Reason)
			}
			if tc.parent == "" {
				must(t, os.Remove(filepath.Join(dir, "team.yaml")))
			} else {
				write("team.yaml", tc.parent)
			}
			must(t, eng.Decide(t.Context(), workflow.StepAgent("wf-gone", "d"), "call_1_0", host.Decision{Approved: true}))
			res, err = workflow.Resume(context.Background(), eng, "wf-gone", workflow.Options{})
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if res.Status != checkpoint.StatusDone {
				t.Fatalf("resume: %s (%s); want the step's agent continued by the parent file it keeps", res.Status, res.Reason)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
				t.Fatal("the resumed step wrote out.txt, which its parent file's rules deny")
			}
		})
	}
}
