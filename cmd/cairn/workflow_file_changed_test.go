package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workflow file changed between the stop and `cairn workflow resume` is
// said to have changed, as a changed agent file is by `cairn resume`, and
// the resume goes on with the file the workflow started with: the step the
// edit added is not run. A resume with the file as it was says nothing of
// it.
func TestWorkflowResumeSaysTheWorkflowFileChanged(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "ws/a.txt", "hi\n")
	writeIn(t, dir, "step.yaml", "name: step\nmodel: {provider: script, script: script.yaml}\n"+
		"tools: [{module: builtin, only: [read_file]}]\nlimits: {max_rounds: 1}\n")
	writeIn(t, dir, "script.yaml", "turns:\n  - tool_calls: [{name: read_file, input: {path: a.txt}}]\n"+
		"  - tool_calls: [{name: read_file, input: {path: a.txt}}]\n  - text: done reading\n")
	flow := "name: lim\nworkspace: ws\nsteps:\n  - name: one\n    agent: step.yaml\n    prompt: go\n"
	writeIn(t, dir, "flow.yaml", flow)
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitPaused {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	if code, _, errOut := cairn(t, append([]string{"workflow", "resume", "w"}, flags...)...); code != exitPaused || strings.Contains(errOut, "warning") {
		t.Fatalf("resume with the file unchanged: exit %d, %s; want paused again, with no warning", code, errOut)
	}
	writeIn(t, dir, "flow.yaml", flow+"  - name: two\n    agent: step.yaml\n    prompt: more\n")
	code, out, errOut := cairn(t, append([]string{"workflow", "resume", "--max-rounds", "5", "w"}, flags...)...)
	want := "cairn: warning: the workflow file " + filepath.Join(dir, "flow.yaml") + " changed since the workflow started; " +
		"resuming workflow w with the one it started with"
	if code != exitDone || !strings.Contains(errOut, want) || !strings.Contains(errOut, "cairn workflow run --id NEW") {
		t.Fatalf("resume after the file changed: exit %d\n%s%s\nwant a warning that says %q and how to run the new one", code, out, errOut, want)
	}
	if strings.Contains(out, "step two") || !strings.Contains(out, "workflow w done: 1 step ran") {
		t.Fatalf("the resume ran other steps than the stored file's:\n%s", out)
	}
}
