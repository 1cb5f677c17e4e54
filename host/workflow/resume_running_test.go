package workflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a resume of a failed workflow recorded nothing until a step
// completed, so while it ran, and after it was killed, the workflow was
// shown failed with the cause of the run before. The record says running
// once the resume has started, before any step does: another process
// shows it running while the resume holds the workflow.
func TestResumeRecordsItRuns(t *testing.T) {
	flows := t.TempDir()
	must(t, os.Mkdir(filepath.Join(flows, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(flows, "flow.yaml"), []byte("name: f\nworkspace: ws\nsteps:\n"+
		"  - {name: a, tool: read_file, module: builtin, input: {path: missing.md}}\n"), 0o644))
	f, err := workflow.Load(filepath.Join(flows, "flow.yaml"))
	must(t, err)
	dir := t.TempDir()
	store, err := checkpoint.OpenFileStore(dir)
	must(t, err)
	eng := engine(t, store)
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wr"})
	must(t, err)
	if res.Status != checkpoint.StatusFailed {
		t.Fatalf("run: %s (%s); want failed", res.Status, res.Reason)
	}
	other, err := checkpoint.OpenFileStore(dir) // another process, as far as the lock goes
	must(t, err)
	var shown *checkpoint.Workflow
	var showErr error
	_, err = workflow.Resume(context.Background(), eng, "wr", workflow.Options{OnStep: func(ev workflow.StepEvent) {
		if ev.Type == "start" {
			shown, showErr = workflow.Show(other, "wr")
		}
	}})
	must(t, err)
	if showErr != nil || shown.Status != checkpoint.StatusRunning || shown.Reason != "" {
		t.Fatalf("shown as the resume's first step starts: %+v, %v; want running, with no reason", shown, showErr)
	}
}

// A negative Parallel is refused before anything is stored, as a
// negative max_parallel is.
func TestNegativeParallelRefused(t *testing.T) {
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	store := checkpoint.NewMemStore()
	_, err = workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wp", Parallel: -1})
	if !errors.Is(err, workflow.ErrParallel) || !strings.Contains(err.Error(), "-1") {
		t.Fatalf("got %v, want ErrParallel", err)
	}
	if ids, _ := store.WorkflowIDs(); len(ids) != 0 {
		t.Fatalf("stored %v", ids)
	}
}
