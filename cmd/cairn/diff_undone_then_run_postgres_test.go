package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: once `cairn undo` had taken back every round this node
// kept, `cairn diff` with no round refused, saying undo took them back,
// even after the agent had run since on another node and changed a file
// there: the store's pasts keep that round, which no undo here took back.
// It shows that round, and before the other node ran, it refuses as it
// did. Real processes and a real server: the other node is a process
// with a temporary directory of its own, where a node keeps its changes.
func TestDiffAfterUndoTookBackEveryRoundShowsARoundRunSinceOnAnotherNode(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	agentFile, _ := scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, roundsScript(25)+"  - tool_calls: [{name: write_file, input: {path: later.txt, content: 'run since'}}]\n  - text: done again\n")
	if code, _, errOut := cairnProcess(t, "run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	// The other node's workspace, as the store's pasts keep it: the
	// workspace before the undos below, which no past records.
	wsB := filepath.Join(t.TempDir(), "node-b")
	must(t, os.CopyFS(wsB, os.DirFS(filepath.Join(filepath.Dir(agentFile), "workspace"))))
	for want := 25; want > 15; want-- {
		if code, out, errOut := cairnProcess(t, "undo", "--store", url, "w"); code != exitDone || !strings.Contains(out, "undid round "+itoa(want)) {
			t.Fatalf("undo: exit %d %q %s; want round %d", code, out, errOut, want)
		}
	}
	if code, out, errOut := cairnProcess(t, "diff", "--store", url, "w"); code != exitFailed || !strings.Contains(errOut, "undo took back") {
		t.Fatalf("diff after every kept round was undone: exit %d %q %s", code, out, errOut)
	}

	other := onNode(exec.Command(cairnBinary(t), "run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "--workspace", wsB,
		"-f", agentFile, "more"), wsB)
	var errOut bytes.Buffer
	other.Stderr = &errOut
	if err := other.Run(); err != nil {
		t.Fatalf("run on the other node: %v: %s", err, errOut.String())
	}
	code, out, stderr := cairnProcess(t, "diff", "--store", url, "w")
	if code != exitDone || !strings.Contains(out, "round 27") || !strings.Contains(out, "later.txt") || !strings.Contains(out, "+run since") {
		t.Fatalf("diff after the other node ran: exit %d %q %s", code, out, stderr)
	}
}
