package workflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// answerFlow writes a workflow file whose one agent step, a, answers
// answer, and returns it loaded.
func answerFlow(t *testing.T, answer string) *workflow.Flow {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	for name, text := range map[string]string{
		"script.yaml": "turns:\n  - text: " + answer + "\n",
		"agent.yaml":  "name: answerer\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [read_file]}]\n",
		"flow.yaml":   "name: st\nworkspace: ws\nsteps:\n  - {name: a, agent: agent.yaml, prompt: go}\n",
	} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	return f
}

// Regression: once a workflow's record was moved aside, a new run of
// another workflow file under its id found the step agent ST.a the first
// run had left, "resumed it from its agent's boundary" and reported its
// old answer as the new step's output. The new run is refused before it
// stores anything, naming the agent and how to go on, and the agent is
// left as it was.
func TestNewRunRefusesStepAgentOfEarlierRun(t *testing.T) {
	dir := t.TempDir()
	store, err := checkpoint.OpenFileStore(dir)
	must(t, err)
	eng := engine(t, store)
	res, err := workflow.Run(context.Background(), eng, answerFlow(t, "old answer"), workflow.Options{ID: "ST"})
	must(t, err)
	if res.Status != checkpoint.StatusDone || outputs(res.Record)["a"] != "old answer" {
		t.Fatalf("first run: %s (%s), %q", res.Status, res.Reason, outputs(res.Record))
	}
	must(t, os.Rename(filepath.Join(dir, "workflows", "ST.cbor"), filepath.Join(t.TempDir(), "ST.cbor.aside")))
	agentDir := filepath.Join(dir, "agents", "ST.a")
	before := tree(t, agentDir)

	res, err = workflow.Run(context.Background(), eng, answerFlow(t, "new answer"), workflow.Options{ID: "ST"})
	if !errors.Is(err, checkpoint.ErrExists) {
		t.Fatalf("second run: %+v, %v; want it refused", res, err)
	}
	for _, want := range []string{"agent ST.a", "earlier run", "mv " + agentDir, "another id (--id)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if _, err := store.Workflow("ST"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("the refused run stored a record: %v", err)
	}
	if after := tree(t, agentDir); !reflect.DeepEqual(after, before) {
		t.Errorf("the earlier run's agent changed")
	}
}

// Regression, the same defect met by a resume: a step agent another run
// made under the workflow's id (it has the workflow's id as its
// correlation label, as the step agents of a run of the same id had) was
// taken over as the step's agent. Each run gives its step agents its own
// token, and a step whose agent lacks it fails naming the agent and how
// to go on; the agent is left as it was.
func TestResumeRefusesStepAgentOfAnotherRun(t *testing.T) {
	store, err := checkpoint.OpenFileStore(t.TempDir())
	must(t, err)
	eng := engine(t, store)
	f := answerFlow(t, "this run's answer")
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = workflow.Run(stopped, eng, f, workflow.Options{ID: "ST"}) // stored, no step run
	must(t, err)
	af, err := host.LoadAgentFile(filepath.Join(answerFlow(t, "another run's answer").Dir, "agent.yaml"))
	must(t, err)
	other, err := eng.Run(context.Background(), host.RunOptions{Agent: af, ID: workflow.StepAgent("ST", "a"), Prompt: "go",
		Workspace: t.TempDir(), Labels: checkpoint.Labels{Correlation: "ST"}})
	must(t, err)
	if other.Status != host.StatusDone {
		t.Fatalf("the other run's agent: %s (%s)", other.Status, other.Reason)
	}
	before, err := store.Read("ST.a")
	must(t, err)

	res, err := workflow.Resume(context.Background(), eng, "ST", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusFailed || !strings.Contains(res.Reason, "agent ST.a") ||
		!strings.Contains(res.Reason, "not this workflow's") || !strings.Contains(res.Reason, "cairn workflow resume ST") {
		t.Fatalf("resume: %s (%s), outputs %q; want step a failed naming agent ST.a", res.Status, res.Reason, outputs(res.Record))
	}
	after, err := store.Read("ST.a")
	must(t, err)
	if after.State.Round != before.State.Round || len(after.State.Runs) != len(before.State.Runs) {
		t.Fatal("the other run's agent was run")
	}
}

// A workflow that a cairn writing record version 1 started has no run
// token, and its step agents carry its id alone as their label: a resume
// still takes them as its own (here, an agent that had answered before the
// stop, whose answer becomes the step's output without a run).
func TestWorkflowWithoutRunTokenKeepsItsStepAgents(t *testing.T) {
	store, err := checkpoint.OpenFileStore(t.TempDir())
	must(t, err)
	eng := engine(t, store)
	f := answerFlow(t, "its answer")
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = workflow.Run(stopped, eng, f, workflow.Options{ID: "ST"})
	must(t, err)
	rec, err := store.Workflow("ST")
	must(t, err)
	rec.Run = "" // as version 1 kept it
	must(t, store.PutWorkflow(rec))
	af, err := host.LoadAgentFile(filepath.Join(f.Dir, "agent.yaml"))
	must(t, err)
	_, err = eng.Run(context.Background(), host.RunOptions{Agent: af, ID: workflow.StepAgent("ST", "a"), Prompt: "go",
		Workspace: filepath.Join(f.Dir, "ws"), Labels: checkpoint.Labels{Correlation: "ST"}})
	must(t, err)
	var st steps
	res, err := workflow.Resume(context.Background(), eng, "ST", workflow.Options{OnStep: st.on})
	must(t, err)
	if res.Status != checkpoint.StatusDone || outputs(res.Record)["a"] != "its answer" || len(st.evs) == 0 || !st.evs[0].Resumed {
		t.Fatalf("resume: %s (%s), outputs %q, events %+v", res.Status, res.Reason, outputs(res.Record), st.evs)
	}
}
