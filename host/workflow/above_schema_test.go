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

// Regression: a delegation step's agent keeps its parent file, whose
// rules bind it, in a state of the same version as any other agent's; a
// cairn that knew no parent files read it, left them out, and resumed the
// agent under its own rules. Its state is now of a newer version, which
// such a cairn refuses; every other agent's stays readable by it.
func TestDelegationStepAgentIsRefusedByACairnThatKnowsNoParentFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)) }
	write("done.yaml", "turns:\n  - text: done\n")
	write("team.yaml", "name: team\nmodel: {provider: script}\ntools: [{module: builtin}]\n"+
		"approvals: [{tool: write_file, action: deny}]\n"+
		"agents:\n  - name: kid\n    description: says done\n    model: {provider: script, script: done.yaml}\n    tools: [{module: builtin}]\n")
	write("solo.yaml", "name: solo\nmodel: {provider: script, script: done.yaml}\ntools: [{module: builtin}]\n")
	write("flow.yaml", "name: f\nworkspace: .\nsteps:\n  - {name: d, delegate: kid, parent: team.yaml, task: go}\n"+
		"  - {name: s, agent: solo.yaml, prompt: go}\n")
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	store, err := host.OpenStore(t.TempDir())
	must(t, err)
	res, err := workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wf-schema"})
	must(t, err)
	if res.Status != checkpoint.StatusDone {
		t.Fatalf("run: %s (%s)", res.Status, res.Reason)
	}
	for step, want := range map[string]int{"d": 3, "s": 2} {
		rec, err := store.Read(workflow.StepAgent("wf-schema", step))
		must(t, err)
		if got := rec.State.Schema; got != want {
			t.Errorf("step %s's agent is stored at schema version %d, want %d", step, got, want)
		}
	}
}
