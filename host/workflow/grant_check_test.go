package workflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: the check before a workflow is stored read each step's
// modules and their only: lists, but not the grants its agent's start
// refuses, so a step whose agent (its own, a delegation's sub-agent, or a
// tool step's) asked of its tools what its grant did not give failed only
// when it started, after the steps before it had run. Run refuses it, as
// the agent's start would (host.CheckTools), before anything runs or is
// stored; so does Resume for a step it starts anew.
func TestStepGrantsCheckedBeforeAnythingIsStored(t *testing.T) {
	const bad = "tools: [{module: builtin, only: [write_file], grant: {workspace: ro}}]\n"
	for _, tc := range []struct{ name, step, want string }{
		{"agent step", "{name: b, needs: [a], agent: bad.yaml, prompt: x}", `tool "write_file"`},
		{"delegation step", "{name: b, needs: [a], delegate: writer, parent: writers.yaml, task: x}", `tool "write_file"`},
		{"tool step", "{name: b, needs: [a], tool: write_file, module: builtin, grant: {workspace: ro}, input: {path: x, content: y}}",
			"grant: in the workflow file"},
		{"allow entry", "{name: b, needs: [a], tool: read_file, module: builtin, grant: {workspace: ro, net: {allow: [\"a.example:x\"]}}, input: {path: x}}",
			`allow entry "a.example:x"`},
	} {
		files := map[string]string{
			"flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
				"  - {name: a, tool: write_file, module: builtin, input: {path: a.txt, content: ran}}\n  - " + tc.step + "\n",
			"bad.yaml": "name: bad\nmodel: {provider: script, script: script.yaml}\n" + bad,
			"writers.yaml": "name: writers\nmodel: {provider: script, script: script.yaml}\n" +
				"tools: [{module: builtin, only: [read_file, write_file]}]\n" +
				"agents:\n  - name: writer\n    description: writes\n    model: {provider: script, script: script.yaml}\n    " + bad,
		}
		for k, v := range goodFiles {
			files[k] = v
		}
		dir := flowDir(t, files)
		f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
		must(t, err)
		store := checkpoint.NewMemStore()
		res, err := workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wf"})
		if !errors.Is(err, workflow.ErrFlow) || tc.name != "allow entry" && !errors.Is(err, host.ErrGrant) ||
			!strings.Contains(err.Error(), "step b: ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "step a") {
			t.Errorf("%s: got %v, %+v; want ErrFlow naming step b and %q", tc.name, err, res, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "ws", "a.txt")); !os.IsNotExist(err) {
			t.Errorf("%s: step a ran (%v)", tc.name, err)
		}
		if ids, _ := store.WorkflowIDs(); len(ids) != 0 {
			t.Errorf("%s: stored workflows %v", tc.name, ids)
		}
		if agents, _ := store.List(); len(agents) != 0 {
			t.Errorf("%s: stored agents %v", tc.name, agents)
		}
	}
}
