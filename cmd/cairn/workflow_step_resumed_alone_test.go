package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a workflow's step agent resumed by itself (as `cairn ls`
// shows it interrupted after a kill, and `cairn show` says to resume it)
// ended "done" without a word that the workflow has not recorded the step
// nor run the steps after it. The resume says which workflow the agent's
// step is of and that `cairn workflow resume` goes on with it.
func TestWorkflowStepResumedAloneSaysTheWorkflowGoesOn(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "step.yaml", "name: step\nmodel: {provider: script, script: s.yaml}\n"+
		"tools: [{module: builtin, only: [write_file]}]\nlimits: {max_rounds: 1}\n")
	writeIn(t, dir, "s.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: x}}]\n"+
		"  - tool_calls: [{name: write_file, input: {path: b.txt, content: y}}]\n  - text: wrote both\n")
	writeIn(t, dir, "flow.yaml", "name: alone\nworkspace: ws\nsteps:\n  - {name: one, agent: step.yaml, prompt: go}\n"+
		"  - {name: two, needs: [one], tool: write_file, module: builtin, grant: {workspace: rw}, input: {path: c.txt, content: z}}\n")
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitPaused {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	code, out, errOut := cairn(t, append([]string{"resume", "--max-rounds", "5", "w.one"}, flags...)...)
	if code != exitDone || !strings.Contains(out+errOut, "step one of workflow w") || !strings.Contains(out+errOut, "`cairn workflow resume w`") {
		t.Fatalf("resume w.one: exit %d\n%s%s\nwant it done, saying the step is of workflow w and that `cairn workflow resume w` goes on", code, out, errOut)
	}
	code, out, errOut = cairn(t, append([]string{"workflow", "resume", "--max-rounds", "5", "w"}, flags...)...)
	if code != exitDone || !strings.Contains(out, "step one done: wrote both") || !strings.Contains(out, "step two done") {
		t.Fatalf("workflow resume: exit %d\n%s%s", code, out, errOut)
	}
	// Once the workflow has recorded the step, a resume of its agent has
	// nothing of the workflow's to say.
	if code, out, errOut := cairn(t, append([]string{"resume", "w.one"}, flags...)...); strings.Contains(out+errOut, "has not recorded") {
		t.Errorf("resume of a recorded step's agent: exit %d\n%s%s", code, out, errOut)
	}
}
