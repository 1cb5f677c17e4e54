package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn workflow resume` of a step whose agent file changed
// since the step's agent started said nothing of it without --json (the
// step agents' warnings were dropped), and with --json said that
// --upgrade uses the new one, a flag workflow resume does not have. Both
// now warn, naming the step's agent, and say how to take up the new file:
// resume the step's agent with --upgrade, then the workflow, which
// records the step; and that advice works.
func TestWorkflowResumeWarnsOfAStepAgentsChangedFile(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "step.yaml", "name: step\nmodel: {provider: script, script: s.yaml}\n"+
		"tools: [{module: builtin, only: [write_file]}]\nlimits: {max_rounds: 1}\n")
	writeIn(t, dir, "s.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: x}}]\n  - text: the old answer\n")
	writeIn(t, dir, "new.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: x}}]\n  - text: the new answer\n")
	writeIn(t, dir, "flow.yaml", "name: changed\nworkspace: ws\nsteps:\n  - {name: one, agent: step.yaml, prompt: go}\n")
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitPaused {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	writeIn(t, dir, "step.yaml", "name: step\nmodel: {provider: script, script: new.yaml}\n"+
		"tools: [{module: builtin, only: [write_file]}]\nlimits: {max_rounds: 1}\n")
	advice := "`cairn resume --upgrade w.one` continues the step's agent with it, then `cairn workflow resume w` records the step"
	code, out, errOut := cairn(t, append([]string{"workflow", "resume", "w"}, flags...)...)
	if code != exitPaused || !strings.Contains(errOut, "cairn: warning: w.one: the agent file "+filepath.Join(dir, "step.yaml")+" changed since the agent started") ||
		!strings.Contains(errOut, advice) || strings.Contains(errOut, "--upgrade uses the new one") {
		t.Fatalf("workflow resume: exit %d\n%s%s\nwant it paused again, warning of w.one's changed agent file and saying %s", code, out, errOut, advice)
	}
	code, out, errOut = cairn(t, append([]string{"workflow", "resume", "--json", "w"}, flags...)...)
	if code != exitPaused || !strings.Contains(out, `"type":"warning"`) || !strings.Contains(out, `"agent":"w.one"`) ||
		!strings.Contains(out, "cairn resume --upgrade w.one") || strings.Contains(out, "--upgrade uses the new one") {
		t.Fatalf("workflow resume --json: exit %d\n%s%s\nwant a warning of w.one saying %s", code, out, errOut, advice)
	}
	if code, out, errOut := cairn(t, append([]string{"resume", "--upgrade", "--max-rounds", "5", "w.one"}, flags...)...); code != exitDone {
		t.Fatalf("resume --upgrade w.one: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cairn(t, append([]string{"workflow", "resume", "w"}, flags...)...); code != exitDone || !strings.Contains(out, "step one done: the new answer") {
		t.Fatalf("workflow resume after the step's agent took up its new file: exit %d\n%s%s", code, out, errOut)
	}
}
