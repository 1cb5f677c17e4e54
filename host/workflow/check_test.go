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

// flowDir writes files (name to text; a name ending in / is a directory)
// into a new directory and returns it.
func flowDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

// goodFiles are an agent file, its script, a team with a sub-agent and a
// workspace, for flows whose other steps are wrong.
var goodFiles = map[string]string{
	"ok.yaml":     "name: ok\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [read_file]}]\n",
	"script.yaml": "turns:\n  - text: fine\n",
	"team.yaml": "name: team\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [read_file]}]\n" +
		"agents:\n  - name: reviewer\n    description: reviews\n    model: {provider: script, script: script.yaml}\n" +
		"    tools: [{module: builtin, only: [read_file]}]\n",
	"ws/notes.md": "notes\n",
}

// Regression: a step whose files were wrong (an agent file missing or not
// valid, a module or tool that is not there, an undeclared sub-agent, no
// workspace) was found only when the step ran, after the workflow was
// stored, so the stored flow failed the same way on every resume. Run
// refuses such a flow, naming the step and the problem, before it stores
// or runs anything.
func TestStepFilesCheckedBeforeAnythingIsStored(t *testing.T) {
	for _, tc := range []struct{ name, step, extra, want string }{
		{"agent file missing", "{name: b, needs: [a], agent: nosuch.yaml, prompt: x}", "", "nosuch.yaml"},
		{"agent file not valid", "{name: b, needs: [a], agent: bad.yaml, prompt: x}", "name: bad\nmodel: {provider: script}\nfoo: 1\n", `unknown key "foo"`},
		{"agent's module missing", "{name: b, needs: [a], agent: bad.yaml, prompt: x}",
			"name: bad\nmodel: {provider: script, script: script.yaml}\ntools: [{module: nosuch.wasm}]\n", "nosuch.wasm"},
		{"agent's only: unknown", "{name: b, needs: [a], agent: bad.yaml, prompt: x}",
			"name: bad\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [nope]}]\n", `no tool "nope"`},
		{"agent's script missing", "{name: b, needs: [a], agent: bad.yaml, prompt: x}",
			"name: bad\nmodel: {provider: script, script: nosuch-script.yaml}\ntools: [{module: builtin}]\n", "nosuch-script.yaml"},
		{"parent missing", "{name: b, needs: [a], delegate: reviewer, parent: nosuch.yaml, task: x}", "", "nosuch.yaml"},
		{"sub-agent not declared", "{name: b, needs: [a], delegate: nobody, parent: team.yaml, task: x}", "", `no sub-agent "nobody"`},
		{"module missing", "{name: b, needs: [a], tool: t, module: nosuch.wasm, input: {}}", "", "nosuch.wasm"},
		{"tool not in module", "{name: b, needs: [a], tool: no_such_tool, module: builtin, input: {}}", "", `no tool "no_such_tool"`},
		{"step's workspace missing", "{name: b, needs: [a], tool: read_file, module: builtin, input: {}, workspace: nowhere}", "", "nowhere"},
	} {
		files := map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: ok.yaml, prompt: x}\n  - " + tc.step + "\n"}
		for k, v := range goodFiles {
			files[k] = v
		}
		if tc.extra != "" {
			files["bad.yaml"] = tc.extra
		}
		dir := flowDir(t, files)
		f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
		must(t, err)
		store := checkpoint.NewMemStore()
		res, err := workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wf"})
		if !errors.Is(err, workflow.ErrFlow) || !strings.Contains(err.Error(), "step b: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, %+v; want ErrFlow naming step b and %q", tc.name, err, res, tc.want)
		}
		if ids, _ := store.WorkflowIDs(); len(ids) != 0 {
			t.Errorf("%s: stored workflows %v", tc.name, ids)
		}
		if agents, _ := store.List(); len(agents) != 0 {
			t.Errorf("%s: stored agents %v", tc.name, agents)
		}
	}
}

// A tool step with no workspace, from neither the flow nor the step, is
// refused before anything is stored.
func TestToolStepWithoutWorkspaceRefused(t *testing.T) {
	f, err := workflow.Parse([]byte("name: f\nsteps:\n  - {name: a, tool: read_file, module: builtin, input: {path: x}}\n"), t.TempDir())
	must(t, err)
	store := checkpoint.NewMemStore()
	_, err = workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wf"})
	if !errors.Is(err, workflow.ErrFlow) || !strings.Contains(err.Error(), "step a: ") || !strings.Contains(err.Error(), "needs a workspace") {
		t.Fatalf("got %v, want ErrFlow saying step a needs a workspace", err)
	}
	if ids, _ := store.WorkflowIDs(); len(ids) != 0 {
		t.Fatalf("stored %v", ids)
	}
}

// Regression: resume re-parsed the stored flow and ran it, so a file a
// step names that had gone since the start failed that step only when it
// ran. Resume checks the steps it will start before it changes anything;
// once the file is back, it continues.
func TestResumeChecksTheStepsItStarts(t *testing.T) {
	files := map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, tool: read_file, module: builtin, input: {path: notes.md}}\n" +
		"  - {name: b, needs: [a], agent: ok.yaml, prompt: x}\n"}
	for k, v := range goodFiles {
		files[k] = v
	}
	dir := flowDir(t, files)
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	store := checkpoint.NewMemStore()
	eng := engine(t, store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := workflow.Run(ctx, eng, f, workflow.Options{ID: "wf", OnStep: func(ev workflow.StepEvent) {
		if ev.Type == "done" {
			cancel()
		}
	}})
	must(t, err)
	if res.Status != checkpoint.StatusPaused || len(res.Ran) != 1 {
		t.Fatalf("run: %s (%s), ran %v", res.Status, res.Reason, res.Ran)
	}
	agent := filepath.Join(dir, "ok.yaml")
	must(t, os.Rename(agent, agent+".away"))
	before, err := store.Workflow("wf")
	must(t, err)
	res, err = workflow.Resume(context.Background(), eng, "wf", workflow.Options{})
	if !errors.Is(err, workflow.ErrFlow) || !strings.Contains(err.Error(), "step b: ") || !strings.Contains(err.Error(), "ok.yaml") {
		t.Fatalf("resume without the agent file: %v, %+v; want ErrFlow naming step b and ok.yaml", err, res)
	}
	after, err := store.Workflow("wf")
	must(t, err)
	if after.Status != before.Status || after.Reason != before.Reason || len(after.Steps) != 1 || store.Exists(workflow.StepAgent("wf", "b")) {
		t.Fatalf("the refused resume changed the workflow: %s (%s), %d steps", after.Status, after.Reason, len(after.Steps))
	}
	must(t, os.Rename(agent+".away", agent))
	res, err = workflow.Resume(context.Background(), eng, "wf", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusDone || outputs(res.Record)["b"] != "fine" {
		t.Fatalf("resume with the file back: %s (%s)", res.Status, res.Reason)
	}
}

// Regression: a step refused by the check before anything is stored (its
// agent file, parent, module or workspace not there) was named without
// the line of the workflow file to change, where every other refusal of a
// workflow file names it. The error names the line of the key whose value
// is wrong.
func TestStepCheckNamesTheLine(t *testing.T) {
	for _, tc := range []struct{ name, step, want string }{
		{"agent file missing", "    agent: nosuch.yaml\n    prompt: x\n", "line 7: step b: "},
		{"parent missing", "    delegate: reviewer\n    parent: nosuch.yaml\n    task: x\n", "line 8: step b: "},
		{"sub-agent not declared", "    delegate: nobody\n    parent: team.yaml\n    task: x\n", "line 7: step b: "},
		{"module missing", "    tool: t\n    module: nosuch.wasm\n", "line 8: step b: "},
		{"step's workspace missing", "    tool: read_file\n    module: builtin\n    workspace: nowhere\n", "line 9: step b: "},
	} {
		files := map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: ok.yaml, prompt: x}\n" +
			"  - name: b\n    needs: [a]\n" + tc.step}
		for k, v := range goodFiles {
			files[k] = v
		}
		dir := flowDir(t, files)
		f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
		must(t, err)
		_, err = workflow.Run(context.Background(), engine(t, checkpoint.NewMemStore()), f, workflow.Options{ID: "wf"})
		if !errors.Is(err, workflow.ErrFlow) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want ErrFlow with %q", tc.name, err, tc.want)
		}
	}
}
