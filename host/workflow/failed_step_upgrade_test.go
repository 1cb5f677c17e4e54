package workflow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a failed agent step said to fix the cause and resume, but
// the resume ran the step's agent on the agent file and script stored
// when it began, so the fix was never taken up and it failed the same
// way. The resume reads them again for an agent that failed.
func TestWorkflowResumeTakesUpAFixedStep(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "a.yaml"),
		[]byte("name: a\nmodel: {provider: script, script: a-s.yaml}\ntools: [{module: builtin}]\n"), 0o644))
	// Over 100 turns, a script is parsed a turn at a time: its broken
	// second turn fails the run when it is reached.
	script := func(second string) string {
		var b strings.Builder
		b.WriteString("turns:\n  - tool_calls: [{name: list_dir, input: {path: .}}]\n" + second)
		for i := range 110 {
			fmt.Fprintf(&b, "  - text: filler %d\n", i)
		}
		return b.String()
	}
	must(t, os.WriteFile(filepath.Join(dir, "a-s.yaml"), []byte(script("  - tool_calls: 5\n")), 0o644))
	flow := filepath.Join(dir, "flow.yaml")
	must(t, os.WriteFile(flow, []byte("name: fx\nworkspace: ws\nsteps:\n  - name: a\n    agent: a.yaml\n    prompt: go\n"), 0o644))
	store, err := checkpoint.OpenFileStore(filepath.Join(dir, "store"))
	must(t, err)
	eng := engine(t, store)
	f, err := workflow.Load(flow)
	must(t, err)
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "fx"})
	if err != nil || res.Status != checkpoint.StatusFailed {
		t.Fatalf("run: %+v, %v; want step a failed", res, err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "a-s.yaml"), []byte(script("  - text: fixed\n")), 0o644))
	res, err = workflow.Resume(context.Background(), eng, "fx", workflow.Options{})
	if err != nil || res.Status != checkpoint.StatusDone {
		t.Fatalf("resume after the fix: %+v, %v; want it done", res, err)
	}
	if out := outputs(res.Record)["a"]; out != "fixed" {
		t.Fatalf("step a's output %q, want the fixed script's answer", out)
	}
}
