package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workflow's step agent resumed by itself with --workspace is refused,
// nothing changed, as a sub-agent is: moved alone it would go on in
// another directory than the workflow's other steps, which would not see
// what it wrote. A resume of the workflow then continues the step where it
// ran, and the next step reads what it wrote.
func TestWorkflowStepResumedElsewhereAloneIsRefused(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "writer.yaml", "name: writer\nmodel: {provider: script, script: w.yaml}\n"+
		"tools: [{module: builtin, only: [write_file]}]\nlimits: {max_rounds: 1}\n")
	writeIn(t, dir, "w.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: \"one\\n\"}}]\n"+
		"  - tool_calls: [{name: write_file, input: {path: b.txt, content: \"two\\n\"}}]\n  - text: wrote both\n")
	writeIn(t, dir, "reader.yaml", "name: reader\nmodel: {provider: script, script: r.yaml}\n"+
		"tools: [{module: builtin, only: [read_file]}]\n")
	writeIn(t, dir, "r.yaml", "turns:\n  - tool_calls: [{name: read_file, input: {path: b.txt}}]\n  - text: read b\n")
	writeIn(t, dir, "flow.yaml", "name: split\nworkspace: ws\nsteps:\n  - name: one\n    agent: writer.yaml\n    prompt: go\n"+
		"  - name: two\n    agent: reader.yaml\n    prompt: read\n    needs: [one]\n")
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitPaused {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	journal := filepath.Join(store, "agents", "w.one", "journal-0000000000000000.log")
	before, err := os.ReadFile(journal)
	must(t, err)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	code, out, errOut := cairn(t, append([]string{"resume", "--max-rounds", "5", "--workspace", elsewhere, "w.one"}, flags...)...)
	if code != exitUsage || !strings.Contains(errOut, "cairn workflow resume w") || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("resume w.one --workspace: exit %d\n%s%s\nwant exit %d refusing, nothing changed, naming `cairn workflow resume w`", code, out, errOut, exitUsage)
	}
	if _, err := os.Stat(elsewhere); !os.IsNotExist(err) {
		t.Errorf("the refused resume made %s", elsewhere)
	}
	if after, _ := os.ReadFile(journal); !bytes.Equal(after, before) {
		t.Error("the refused resume changed the step agent's journal")
	}
	code, out, errOut = cairn(t, append([]string{"workflow", "resume", "--max-rounds", "5", "w"}, flags...)...)
	if code != exitDone {
		t.Fatalf("workflow resume: exit %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ws", "b.txt")); err != nil || string(b) != "two\n" {
		t.Errorf("ws/b.txt after the workflow's resume: %q, %v; want what step one wrote, in the workflow's workspace", b, err)
	}
}
