package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a step's output, a model's text, was printed raw in the
// lines of `cairn workflow run` and the table of `cairn workflow show`,
// so an escape sequence in it gave the terminal commands (erase the line
// and write a forged one), where cairn run escapes a model's text.
func TestWorkflowStepOutputControlsEscaped(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "a.yaml", "name: a\nmodel: {provider: script, script: s.yaml}\ntools: [{module: builtin, only: [read_file]}]\n")
	writeIn(t, dir, "s.yaml", "turns:\n  - text: \"col\\tfine\\e[2K\\rstep a done: forged\\e]52;c;ZXZpbA==\\a\"\n")
	writeIn(t, dir, "flow.yaml", "name: esc\nworkspace: ws\nsteps:\n  - name: a\n    agent: a.yaml\n    prompt: go\n")
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...)
	if code != exitDone {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if strings.ContainsAny(out, "\x1b\r\a") || !strings.Contains(out, `col fine\x1b[2K\x0dstep a done: forged`) {
		t.Errorf("run printed the step's output with its controls raw:\n%q", out)
	}
	code, out, errOut = cairn(t, "workflow", "show", "--store", flags[1], "w")
	if code != exitDone {
		t.Fatalf("show: exit %d\n%s%s", code, out, errOut)
	}
	if strings.ContainsAny(out, "\x1b\r\a") || !strings.Contains(out, `col fine\x1b[2K\x0dstep a done: forged`) {
		t.Errorf("show printed the step's output with its controls raw:\n%q", out)
	}
}
