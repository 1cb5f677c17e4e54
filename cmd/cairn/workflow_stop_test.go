package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// flowFiles writes files (name to text) into a new directory, with a
// workspace ws/ holding notes.md, and returns the directory.
func flowFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ws", "notes.md"), []byte("notes\n"), 0o644))
	for name, text := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

// storedFiles lists the files under a store's workflows/, agents/ and
// blobs/.
func storedFiles(t *testing.T, store string) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{"workflows", "agents", "blobs"} {
		_ = filepath.WalkDir(filepath.Join(store, sub), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// Regression: a workflow file whose step named a file that was not there
// or not valid ran, stored the workflow, failed with exit 1 and advised a
// resume that could only fail the same way. It is a usage error (exit 2)
// naming the step and the problem, and nothing is stored.
func TestWorkflowFileErrorsExitUsage(t *testing.T) {
	agent := "name: a\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [read_file]}]\n"
	for _, tc := range []struct{ name, step, want string }{
		{"agent file missing", "{name: s, agent: nosuch.yaml, prompt: x}", "nosuch.yaml"},
		{"agent file not valid", "{name: s, agent: bad.yaml, prompt: x}", `unknown key "foo"`},
		{"parent missing", "{name: s, delegate: reviewer, parent: nosuch.yaml, task: x}", "nosuch.yaml"},
		{"sub-agent not declared", "{name: s, delegate: nobody, parent: a.yaml, task: x}", `no sub-agent "nobody"`},
		{"module missing", "{name: s, tool: t, module: nosuch.wasm, input: {}}", "nosuch.wasm"},
		{"tool not in module", "{name: s, tool: no_such_tool, module: builtin, input: {}}", `no tool "no_such_tool"`},
	} {
		dir := flowFiles(t, map[string]string{"a.yaml": agent, "script.yaml": "turns:\n  - text: fine\n",
			"bad.yaml":  "name: bad\nmodel: {provider: script}\nfoo: 1\n",
			"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - " + tc.step + "\n"})
		store := t.TempDir()
		code, _, errOut := cairn(t, "workflow", "run", "--store", store, "--cache", cacheForTests(t), filepath.Join(dir, "flow.yaml"))
		if code != exitUsage || !strings.Contains(errOut, "step s: ") || !strings.Contains(errOut, tc.want) ||
			strings.Contains(errOut, "workflow resume") {
			t.Errorf("%s: exit %d, %s; want exit %d naming step s and %q, advising no resume", tc.name, code, errOut, exitUsage, tc.want)
		}
		if files := storedFiles(t, store); len(files) != 0 {
			t.Errorf("%s: stored %v", tc.name, files)
		}
	}
	// A tool step with no workspace at all.
	dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nsteps:\n  - {name: s, tool: read_file, module: builtin, input: {path: x}}\n"})
	code, _, errOut := cairn(t, "workflow", "run", "--store", t.TempDir(), "--cache", cacheForTests(t), filepath.Join(dir, "flow.yaml"))
	if code != exitUsage || !strings.Contains(errOut, "step s: ") || !strings.Contains(errOut, "needs a workspace") {
		t.Errorf("no workspace: exit %d, %s", code, errOut)
	}
}

// Regression: `cairn workflow run --id` of a workflow that exists exited
// 1. It is a usage error, as `cairn import` of an agent that exists is,
// saying to pick another id or resume it.
func TestWorkflowRunExistingIDExitsUsage(t *testing.T) {
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	args := append([]string{"workflow", "run", "--id", "wf", "--workspace", flowWorkspace(t), exampleFlow}, flags...)
	if code, _, errOut := cairn(t, args...); code != exitDone {
		t.Fatalf("first run: exit %d, %s", code, errOut)
	}
	code, _, errOut := cairn(t, args...)
	if code != exitUsage || !strings.Contains(errOut, "another id") || !strings.Contains(errOut, "`cairn workflow resume wf`") {
		t.Fatalf("second run: exit %d, %s; want exit %d saying to pick another id or resume it", code, errOut, exitUsage)
	}
}

// Regression: a step whose agent another process held failed the
// workflow (exit 1). It exits locked (5), as `cairn resume` of a held
// agent does, names the agent and its holder, and leaves the workflow
// paused, so a resume once the agent is released finishes it.
func TestWorkflowHeldStepExitsLocked(t *testing.T) {
	dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: s, tool: read_file, module: builtin, input: {path: notes.md}}\n"})
	store := t.TempDir()
	other, err := checkpoint.OpenFileStore(store) // another process, as far as the lock goes
	must(t, err)
	lock, err := other.Lock("wf.s", checkpoint.ThisProcess("other"))
	must(t, err)
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", filepath.Join(dir, "flow.yaml")}, flags...)...)
	if code != exitLocked || !strings.Contains(errOut, "wf.s") || !strings.Contains(errOut, fmt.Sprintf("process %d", os.Getpid())) ||
		!strings.Contains(errOut, "`cairn workflow resume wf`") {
		t.Fatalf("run: exit %d, %s; want exit %d naming agent wf.s, its holder and the resume", code, errOut, exitLocked)
	}
	if code, out, _ := cairn(t, "workflow", "show", "--store", store, "wf"); code != exitDone || !strings.Contains(out, ": paused,") {
		t.Fatalf("show: exit %d, %s; want paused", code, out)
	}
	must(t, lock.Unlock())
	if code, out, errOut := cairn(t, append([]string{"workflow", "resume", "wf"}, flags...)...); code != exitDone {
		t.Fatalf("resume once released: exit %d\n%s%s", code, out, errOut)
	}
}

// Regression: a workflow another process runs was called an agent
// (`agent "wf" is locked`).
func TestLockedWorkflowCalledAWorkflow(t *testing.T) {
	store := t.TempDir()
	s, err := checkpoint.OpenFileStore(store)
	must(t, err)
	must(t, s.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "wf", Name: "f",
		Flow: []byte("name: f\nsteps: [{name: a, tool: read_file, module: builtin}]\n"), Status: checkpoint.StatusPaused}))
	lock, err := s.Lock("wf", checkpoint.ThisProcess("workflow"))
	must(t, err)
	defer lock.Unlock()
	code, _, errOut := cairn(t, "workflow", "resume", "--store", store, "--cache", cacheForTests(t), "wf")
	if code != exitLocked || !strings.Contains(errOut, `workflow "wf" is run by process`) || strings.Contains(errOut, "agent") {
		t.Fatalf("exit %d, %s; want exit %d calling wf a workflow", code, errOut, exitLocked)
	}
}

// Regression: a workflow waiting for approval said "decide with `cairn
// approve`/`cairn deny`", naming neither the agent nor the call. It names
// both, then the workflow's resume; the reason names the step once.
func TestWorkflowApprovalNamesAgentAndCall(t *testing.T) {
	dir := flowFiles(t, map[string]string{
		"script.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n",
		"asker.yaml": "name: asker\nmodel: {provider: script, script: script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n",
		"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: asker.yaml, prompt: go}\n"})
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", filepath.Join(dir, "flow.yaml")}, flags...)...)
	if code != exitApproval || !strings.Contains(errOut, "`cairn approve wf.a call_1_0`") ||
		!strings.Contains(errOut, "`cairn deny wf.a call_1_0") || !strings.Contains(errOut, "then `cairn workflow resume wf`") ||
		strings.Count(errOut, "step a") != 1 {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	if code, _, errOut := cairn(t, append([]string{"approve", "wf.a", "call_1_0"}, flags...)...); code != exitDone {
		t.Fatalf("approve: exit %d, %s", code, errOut)
	}
	if code, out, errOut := cairn(t, append([]string{"workflow", "resume", "wf"}, flags...)...); code != exitDone ||
		!strings.Contains(out, "step a done: wrote it") {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
}

// Regression: every failed workflow advised "fix it and `cairn workflow
// resume`", even when the cause was in the workflow file, which a resume
// reads as it was stored. A grant the file gives a tool step that its tool
// refuses is now refused before the workflow starts (exit 2, nothing
// stored; see TestWorkflowStepGrantRefusedBeforeAnyStepRuns), so it
// advises no resume; a failure a resume can get past still advises it.
func TestWorkflowFailureAdvisesResumeOnlyWhenItHelps(t *testing.T) {
	for _, tc := range []struct {
		name, step string
		code       int
		resume     bool
	}{
		{"grant the file refuses", "{name: s, tool: write_file, module: builtin, grant: {workspace: ro}, input: {path: x, content: y}}", exitUsage, false},
		{"file not in the workspace", "{name: s, tool: read_file, module: builtin, input: {path: missing.md}}", exitFailed, true},
	} {
		dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - " + tc.step + "\n"})
		code, _, errOut := cairn(t, "workflow", "run", "--id", "wf", "--store", t.TempDir(), "--cache", cacheForTests(t), filepath.Join(dir, "flow.yaml"))
		advised := strings.Contains(errOut, "`cairn workflow resume wf`")
		if code != tc.code || advised != tc.resume || !tc.resume && !strings.Contains(errOut, "workflow file") {
			t.Errorf("%s: exit %d, %s; want exit %d, advising a resume: %v", tc.name, code, errOut, tc.code, tc.resume)
		}
	}
}
