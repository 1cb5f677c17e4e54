package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn workflow resume --json` of a workflow that had
// finished wrote a line of plain text on stdout, where every line is JSON,
// so a reader of JSON Lines found no workflow_end (the kill -9 test of
// the example workflow, whose kill landed after the run had ended, found
// no step skipped and failed). It writes a workflow_end line, status
// done, with the reason, as `cairn resume --json` of an agent that is
// done writes its run_end.
func TestResumeOfFinishedWorkflowWritesJSON(t *testing.T) {
	dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
		"  - {name: read, tool: read_file, module: builtin, input: {path: notes.md}}\n"})
	must(t, os.MkdirAll(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ws", "notes.md"), []byte("notes\n"), 0o644))
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "f"}, append(flags, filepath.Join(dir, "flow.yaml"))...)...); code != exitDone {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := cairn(t, append([]string{"workflow", "resume", "--json"}, append(flags, "f")...)...)
	if code != exitDone {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	var end struct{ Type, Workflow, Status, Reason string }
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if err := json.Unmarshal([]byte(line), &end); err != nil {
			t.Fatalf("a line of stdout is no JSON: %q", line)
		}
	}
	if end.Type != "workflow_end" || end.Workflow != "f" || end.Status != "done" || !strings.Contains(end.Reason, "nothing to resume") {
		t.Fatalf("last line: %+v; want a workflow_end, done, saying there is nothing to resume", end)
	}
}
