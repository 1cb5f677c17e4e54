package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/cairnrun/cairn/checkpoint"
)

// cairn workflow: the example runs to the end and is listed and shown; a
// resume of it then has nothing to do (exit 0, as resume of an agent that
// is done); a resume of an unknown workflow, and a bad workflow file, are
// usage errors (exit 2) that say what happened.
func TestWorkflowCommands(t *testing.T) {
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", "--workspace", flowWorkspace(t), exampleFlow}, flags...)...)
	if code != exitDone || !strings.Contains(out, "step review done: The report is ready.") || !strings.Contains(out, "workflow wf done: 5 steps ran") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = cairn(t, "workflow", "show", "--json", "--store", store, "wf")
	var shown workflowJSON
	if code != exitDone || json.Unmarshal([]byte(out), &shown) != nil || shown.Status != checkpoint.StatusDone ||
		len(shown.Steps) != 5 || shown.Total != 5 {
		t.Fatalf("show --json: exit %d, %s", code, out)
	}
	if code, out, _ = cairn(t, "workflow", "ls", "--store", store); code != exitDone || !strings.Contains(out, "wf  ") || !strings.Contains(out, "5/5") {
		t.Fatalf("ls: exit %d\n%s", code, out)
	}
	if code, out, errOut := cairn(t, append([]string{"workflow", "resume", "wf"}, flags...)...); code != exitDone ||
		!strings.Contains(out, "every step completed; nothing to resume") {
		t.Errorf("resume of a finished workflow: exit %d, %s%s; want exit 0, as resume of an agent that is done", code, out, errOut)
	}
	if code, _, errOut := cairn(t, "workflow", "show", "--store", store, "nobody"); code != exitUsage || !strings.Contains(errOut, "not found") {
		t.Errorf("show of an unknown workflow: exit %d, %s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "resume", "nobody"}, "not found"},
		{[]string{"workflow", "run", writeFile(t, "flow.yaml", "name: f\nsteps: []\n")}, "steps is empty"},
	} {
		code, _, errOut := cairn(t, append(tc.args, flags...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, %s; want exit %d naming %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
}

// A workflow record of a newer cairn is listed as unreadable, and resume
// refuses it, saying to upgrade, with the file left as it was.
func TestWorkflowOfNewerSchema(t *testing.T) {
	store := t.TempDir()
	data, err := cbor.Marshal(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion + 1, ID: "new"})
	must(t, err)
	path := filepath.Join(store, "workflows", "new.cbor")
	must(t, os.MkdirAll(filepath.Dir(path), 0o700))
	must(t, os.WriteFile(path, data, 0o600))
	if code, out, _ := cairn(t, "workflow", "ls", "--store", store); code != exitDone || !strings.Contains(out, "unreadable") {
		t.Fatalf("ls: exit %d\n%s", code, out)
	}
	code, _, errOut := cairn(t, "workflow", "resume", "--store", store, "--cache", cacheForTests(t), "new")
	if code != exitFailed || !strings.Contains(errOut, "upgrade cairn") {
		t.Fatalf("resume: exit %d, %s", code, errOut)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Fatal("the refused record changed")
	}
}

// cairn memory ls lists namespaces and facts, and rm removes a fact once.
func TestMemoryCommands(t *testing.T) {
	dir := t.TempDir()
	store, err := checkpoint.OpenFileStore(dir)
	must(t, err)
	must(t, store.Remember("team", checkpoint.Fact{Key: "build", Text: "make all", Agent: "a1", Round: 3}))
	if code, out, _ := cairn(t, "memory", "ls", "--store", dir); code != exitDone || out != "team\t1 fact\n" {
		t.Fatalf("ls: exit %d, %q", code, out)
	}
	if code, out, _ := cairn(t, "memory", "ls", "--store", dir, "--json", "team"); code != exitDone ||
		!strings.Contains(out, `"key":"build","text":"make all","agent":"a1","round":3`) {
		t.Fatalf("ls --json team: exit %d, %s", code, out)
	}
	if code, _, errOut := cairn(t, "memory", "rm", "--store", dir, "team", "build"); code != exitDone {
		t.Fatalf("rm: exit %d, %s", code, errOut)
	}
	if code, _, errOut := cairn(t, "memory", "rm", "--store", dir, "team", "build"); code != exitUsage || !strings.Contains(errOut, "not found") {
		t.Fatalf("second rm: exit %d, %s", code, errOut)
	}
}

// writeIn writes the file name (a path under dir) with text.
func writeIn(t *testing.T, dir, name, text string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
}

// writeFile writes a file in a new directory and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	must(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// A step paused by its agent's max_rounds is continued by `cairn workflow
// resume --max-rounds N`, as the pause's message says; without the flag it
// pauses again, and a negative limit is refused.
func TestWorkflowResumeRaisesAStepsLimit(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "ws/a.txt", "hi\n")
	writeIn(t, dir, "step.yaml", "name: step\nmodel: {provider: script, script: script.yaml}\n"+
		"tools: [{module: builtin, only: [read_file]}]\nlimits: {max_rounds: 1}\n")
	writeIn(t, dir, "script.yaml", "turns:\n  - tool_calls: [{name: read_file, input: {path: a.txt}}]\n"+
		"  - tool_calls: [{name: read_file, input: {path: a.txt}}]\n  - text: done reading\n")
	writeIn(t, dir, "flow.yaml", "name: lim\nworkspace: ws\nsteps:\n  - name: one\n    agent: step.yaml\n    prompt: go\n")
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...)
	if code != exitPaused || !strings.Contains(errOut, "--max-rounds") || !strings.Contains(errOut, "cairn workflow resume w") {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	if code, _, errOut := cairn(t, append([]string{"workflow", "resume", "w"}, flags...)...); code != exitPaused {
		t.Fatalf("resume without a higher limit: exit %d, %s", code, errOut)
	}
	if code, _, errOut := cairn(t, append([]string{"workflow", "resume", "--max-rounds", "-1", "w"}, flags...)...); code != exitUsage ||
		!strings.Contains(errOut, "cannot be negative") {
		t.Fatalf("resume --max-rounds -1: exit %d, %s", code, errOut)
	}
	code, out, errOut := cairn(t, append([]string{"workflow", "resume", "--max-rounds", "5", "w"}, flags...)...)
	if code != exitDone || !strings.Contains(out, "step one done: done reading") {
		t.Fatalf("resume --max-rounds 5: exit %d\n%s%s", code, out, errOut)
	}
}
