package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a PostgreSQL store's kept changes (what `cairn diff` shows
// of a round and `cairn undo` restores) were kept in the node's temporary
// directory, so a reboot (a tmpfs) or a cleaning of it lost them: undo
// then refused, saying another node ran the round, and the file stayed as
// the call left it. They are kept in the user's state directory, which
// outlasts both. Real processes and a real server: the node's temporary
// directory is emptied between the run and the diff and undo.
func TestPostgreSQLKeptChangesOutlastAnEmptiedTempDirectory(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	agentFile, _ := scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, "turns:\n  - tool_calls: [{name: write_file, input: {path: notes.txt, content: 'after'}}]\n  - text: done\n")
	ws := filepath.Join(filepath.Dir(agentFile), "workspace")
	must(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("before"), 0o644))
	node := keptNode(t, ws)
	if code, _, errOut := node("run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	// A reboot, or a cleaner of the temporary directory.
	tmp := ws + "-tmp"
	must(t, os.RemoveAll(tmp))
	must(t, os.Mkdir(tmp, 0o700))

	if code, out, errOut := node("diff", "--store", url, "w"); code != exitDone || !strings.Contains(out, "-before") || !strings.Contains(out, "+after") {
		t.Fatalf("diff after the temporary directory was emptied: exit %d %q %s", code, out, errOut)
	}
	if code, out, errOut := node("undo", "--store", url, "w"); code != exitDone || !strings.Contains(out, "undid round 1") {
		t.Fatalf("undo after the temporary directory was emptied: exit %d %q %s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "before" {
		t.Fatalf("notes.txt after undo: %q, %v; want %q", b, err, "before")
	}
}

// The kept changes an older cairn kept in the temporary directory
// (cairn-staging-UID/<digest>/AGENT/changes) are still read there by diff
// and undo, while the state directory keeps none of the agent's.
func TestPostgreSQLKeptChangesAnOlderCairnKeptInTheTempDirectoryAreRead(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	agentFile, _ := scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, "turns:\n  - tool_calls: [{name: write_file, input: {path: notes.txt, content: 'after'}}]\n  - text: done\n")
	ws := filepath.Join(filepath.Dir(agentFile), "workspace")
	must(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("before"), 0o644))
	node := keptNode(t, ws)
	if code, _, errOut := node("run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	// Where an older cairn kept them: beside the staging.
	kept, err := filepath.Glob(filepath.Join(ws+"-state", "cairn", "agents", "*", "w", "changes"))
	if err != nil || len(kept) != 1 {
		t.Fatalf("the state directory keeps the changes in %q, %v; want one directory", kept, err)
	}
	digest := filepath.Base(filepath.Dir(filepath.Dir(kept[0])))
	older := filepath.Join(ws+"-tmp", fmt.Sprintf("cairn-staging-%d", os.Getuid()), digest, "w", "changes")
	must(t, os.Rename(kept[0], older))

	if code, out, errOut := node("diff", "--store", url, "w"); code != exitDone || !strings.Contains(out, "-before") || !strings.Contains(out, "+after") {
		t.Fatalf("diff of what an older cairn kept: exit %d %q %s", code, out, errOut)
	}
	if code, out, errOut := node("undo", "--store", url, "w"); code != exitDone || !strings.Contains(out, "undid round 1") {
		t.Fatalf("undo of what an older cairn kept: exit %d %q %s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "before" {
		t.Fatalf("notes.txt after undo: %q, %v; want %q", b, err, "before")
	}
}

// keptNode runs cairn as a node with a temporary directory and a state
// directory of its own (onNode).
func keptNode(t *testing.T, ws string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		t.Helper()
		cmd := onNode(exec.Command(cairnBinary(t), args...), ws)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}
}
