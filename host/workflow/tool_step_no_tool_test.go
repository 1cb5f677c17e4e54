package workflow_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a tool step naming a tool its module lacks was refused in
// an agent file's words, "only: the module has no tool", though a
// workflow file has no only: key. The refusal names the step, the line of
// its tool:, and the tools the module has, and says to fix the step in
// the workflow file.
func TestToolStepNamingAToolItsModuleLacksNamesTheStep(t *testing.T) {
	files := map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: ok.yaml, prompt: x}\n" +
		"  - name: b\n    needs: [a]\n    tool: nosuch\n    module: builtin\n    input: {}\n"}
	for k, v := range goodFiles {
		files[k] = v
	}
	dir := flowDir(t, files)
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	store := checkpoint.NewMemStore()
	_, err = workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wf"})
	if !errors.Is(err, workflow.ErrFlow) {
		t.Fatalf("got %v; want ErrFlow", err)
	}
	for _, want := range []string{"line 7: step b: ", `module builtin has no tool "nosuch"`, "read_file, write_file", "tool: in the workflow file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %v; want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "only:") {
		t.Errorf("got %v; a workflow file has no only: to fix", err)
	}
	if ids, _ := store.List(); len(ids) != 0 {
		t.Errorf("the refused workflow stored %v", ids)
	}
}
