package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a step whose agent another process held failed the whole
// workflow. As a delegation to a held child does, it pauses the workflow
// instead, saying which agent is held by whom and to resume once it is
// released, and a resume then continues it.
func TestHeldStepAgentPausesTheWorkflow(t *testing.T) {
	dir := t.TempDir()
	store, err := checkpoint.OpenFileStore(dir)
	must(t, err)
	f, err := workflow.Parse([]byte("name: f\nsteps:\n  - {name: a, tool: read_file, module: builtin, input: {path: notes.md}}\n"), t.TempDir())
	must(t, err)
	other, err := checkpoint.OpenFileStore(dir) // another process, as far as the lock goes
	must(t, err)
	lock, err := other.Lock(workflow.StepAgent("wf", "a"), checkpoint.ThisProcess("other"))
	must(t, err)
	eng := engine(t, store)
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf", Workspace: workspace(t)})
	must(t, err)
	pid := fmt.Sprintf("process %d", os.Getpid())
	if res.Status != checkpoint.StatusPaused || res.Stop == nil || !errors.Is(res.Stop.Held, checkpoint.ErrLocked) ||
		!strings.Contains(res.Reason, "wf.a") || !strings.Contains(res.Reason, pid) || !strings.Contains(res.Reason, "released") {
		t.Fatalf("run: %s (%s), stop %+v; want paused, held, naming agent wf.a and %s", res.Status, res.Reason, res.Stop, pid)
	}
	if rec, err := store.Workflow("wf"); err != nil || rec.Status != checkpoint.StatusPaused {
		t.Fatalf("stored: %v, %v", rec, err)
	}
	must(t, lock.Unlock())
	res, err = workflow.Resume(context.Background(), eng, "wf", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusDone || !strings.Contains(outputs(res.Record)["a"], "ridge cairn") {
		t.Fatalf("resume once released: %s (%s)", res.Status, res.Reason)
	}
}

// Regression: a workflow locked by another process was called an agent
// (`agent "wf" is locked`). The error names the workflow and still
// matches checkpoint.ErrLocked.
func TestLockedWorkflowNamedAWorkflow(t *testing.T) {
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	store := checkpoint.NewMemStore()
	eng := engine(t, store)
	lock, err := store.Lock("wf", checkpoint.ThisProcess("other"))
	must(t, err)
	defer lock.Unlock()
	for name, run := range map[string]func() error{
		"run": func() error {
			_, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf", Workspace: workspace(t)})
			return err
		},
		"resume": func() error {
			must(t, store.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "wf", Name: "f",
				Flow: []byte("name: f\nsteps: [{name: a, tool: read_file, module: builtin}]\n"), Status: checkpoint.StatusPaused}))
			_, err := workflow.Resume(context.Background(), eng, "wf", workflow.Options{})
			return err
		},
	} {
		err := run()
		if !errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), `workflow "wf"`) || strings.Contains(err.Error(), "agent") {
			t.Errorf("%s: got %v; want ErrLocked naming workflow \"wf\", not an agent", name, err)
		}
	}
}

// Regression: a step's reason named the step twice ("step a: step a:").
func TestStepReasonNamesTheStepOnce(t *testing.T) {
	dir := flowDir(t, map[string]string{"ok.yaml": goodFiles["ok.yaml"], "script.yaml": goodFiles["script.yaml"], "ws/": "",
		"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: ok.yaml, prompt: x}\n"})
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	eng := engine(t, checkpoint.NewMemStore())
	af, err := host.LoadAgentFile(filepath.Join(dir, "ok.yaml"))
	must(t, err)
	// The workflow is stored (a run stopped before its first step), then
	// another agent is made under the id its step's agent will have.
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = workflow.Run(stopped, eng, f, workflow.Options{ID: "wf"})
	must(t, err)
	_, err = eng.Run(context.Background(), host.RunOptions{Agent: af, ID: workflow.StepAgent("wf", "a"), Prompt: "x",
		Workspace: filepath.Join(dir, "ws")})
	must(t, err)
	res, err := workflow.Resume(context.Background(), eng, "wf", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusFailed || strings.Count(res.Reason, "step a") != 1 {
		t.Fatalf("%s: %q; want step a named once", res.Status, res.Reason)
	}
}

// A step waiting for approval says which agent and which calls wait, so
// the caller can say what to approve.
func TestApprovalStopNamesAgentAndCalls(t *testing.T) {
	dir := flowDir(t, map[string]string{
		"script.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n",
		"asker.yaml": "name: asker\nmodel: {provider: script, script: script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n",
		"flow.yaml": "name: f\nworkspace: .\nsteps:\n  - {name: a, agent: asker.yaml, prompt: go}\n"})
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	res, err := workflow.Run(context.Background(), engine(t, checkpoint.NewMemStore()), f, workflow.Options{ID: "wf"})
	must(t, err)
	if res.Status != checkpoint.StatusApproval || res.Stop == nil || res.Stop.Step != "a" || res.Stop.Agent != "wf.a" ||
		len(res.Stop.Calls) != 1 || res.Stop.Calls[0] != "call_1_0" {
		t.Fatalf("%s (%s), stop %+v", res.Status, res.Reason, res.Stop)
	}
}
