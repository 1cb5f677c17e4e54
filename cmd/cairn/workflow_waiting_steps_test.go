package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a workflow whose two steps both stopped awaiting approval
// named only the first on exit, and in its record, so the second step's
// call was found only by its line as the run went. Each is named, with the
// approve and deny that decide it, then the workflow's resume once; deciding
// both as told and resuming carries the workflow to done.
func TestWorkflowNamesEveryWaitingStep(t *testing.T) {
	dir := flowFiles(t, map[string]string{
		"script.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n",
		"asker.yaml": "name: asker\nmodel: {provider: script, script: script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n",
		"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: asker.yaml, prompt: go}\n  - {name: b, agent: asker.yaml, prompt: go}\n"})
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", filepath.Join(dir, "flow.yaml")}, flags...)...)
	if code != exitApproval {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	for _, want := range []string{"step a: awaiting approval of call_1_0", "step b: awaiting approval of call_1_0",
		"`cairn approve wf.a call_1_0`", "`cairn deny wf.a call_1_0 --reason TEXT`",
		"`cairn approve wf.b call_1_0`", "`cairn deny wf.b call_1_0 --reason TEXT`"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("run: exit %d, %s\nwant it to say %q", code, errOut, want)
		}
	}
	if strings.Count(errOut, "cairn workflow resume wf") != 1 {
		t.Errorf("run: %s\nwant the workflow's resume named once, after the decisions", errOut)
	}
	if _, out, _ := cairn(t, "workflow", "show", "--store", store, "wf"); !strings.Contains(out, "step a: awaiting") || !strings.Contains(out, "step b: awaiting") {
		t.Errorf("show names not every waiting step:\n%s", out)
	}
	for _, agent := range []string{"wf.a", "wf.b"} {
		if code, _, errOut := cairn(t, append([]string{"approve", agent, "call_1_0"}, flags...)...); code != exitDone {
			t.Fatalf("approve %s: exit %d, %s", agent, code, errOut)
		}
	}
	if code, out, errOut := cairn(t, append([]string{"workflow", "resume", "wf"}, flags...)...); code != exitDone ||
		!strings.Contains(out, "step a done: wrote it") || !strings.Contains(out, "step b done: wrote it") {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
}
