package workflow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a pause of a workflow asked once a step's agent had looked
// for one for the last time was never obeyed (a run looks between rounds,
// at most every 10 ms, and not after the round that ends it), and the
// workflow started the steps after it. The step ends done,
// the workflow ends paused before them, the request cleared, and a resume
// runs them.
func TestPauseLeftByAStepThatEndedDonePausesTheWorkflow(t *testing.T) {
	store := checkpoint.NewMemStore()
	f, err := workflow.Parse([]byte(`name: f
steps:
  - {name: a, tool: read_file, module: builtin, input: {path: notes.md}}
  - {name: b, tool: read_file, module: builtin, input: {path: notes.md}, needs: [a]}
`), t.TempDir())
	must(t, err)
	eng := engine(t, store)
	agent := workflow.StepAgent("wf", "a")
	asked := false
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf", Workspace: workspace(t),
		OnEvent: func(e host.Event) {
			// The step's run has ended: it looks for no pause again.
			if e.Agent == agent && e.Type == host.EventRunEnd && !asked {
				asked = true
				must(t, store.RequestPause(agent))
			}
		}})
	must(t, err)
	if !asked {
		t.Fatal("step a's run never ended")
	}
	if res.Status != checkpoint.StatusPaused || !strings.Contains(res.Reason, "paused on request") {
		t.Fatalf("run: %s (%s); want paused on request", res.Status, res.Reason)
	}
	if out := outputs(res.Record); !strings.Contains(out["a"], "ridge cairn") || out["b"] != "" {
		t.Fatalf("outputs %v: want step a's alone", out)
	}
	if asked, _ := store.PauseRequested(agent); asked {
		t.Fatal("the obeyed request is still in the store")
	}
	res, err = workflow.Resume(context.Background(), eng, "wf", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusDone || !strings.Contains(outputs(res.Record)["b"], "ridge cairn") {
		t.Fatalf("resume: %s (%s)", res.Status, res.Reason)
	}
}
