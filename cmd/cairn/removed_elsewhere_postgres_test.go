package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: on PostgreSQL a node keeps an agent's rounds' changes in a
// directory of its own, named by the database and the agent's id. Once
// the agent was removed and made again on another node (`cairn run
// --fresh` there), this node's `cairn diff --round 1` showed the removed
// agent's round 1, and `cairn undo` set out to take it back in the new
// agent's workspace. The node now tells what it keeps is of the removed
// agent: the diff shows the new agent's round from the store's pasts,
// and undo says this node never ran it. Real processes and a real
// server: the other node is a process with a temporary directory and a
// workspace of its own.
func TestChangesKeptOfAnAgentRemovedAndMadeAgainElsewhereAreNotShownOrUndone(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	agentYAML := "name: w\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin, only: [write_file]}]\n"
	oldFile, _ := scriptAgent(t, agentYAML, "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: 'old agent'}}]\n  - text: done\n")
	newFile, _ := scriptAgent(t, agentYAML, "turns:\n  - tool_calls: [{name: write_file, input: {path: b.txt, content: 'new agent'}}]\n  - text: done\n")
	if code, _, errOut := cairnProcess(t, "run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "-f", oldFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	wsB := filepath.Join(t.TempDir(), "node-b")
	must(t, os.Mkdir(wsB, 0o755))
	b := onNode(exec.Command(cairnBinary(t), "run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "--fresh", "--workspace", wsB,
		"-f", newFile, "go"), wsB)
	if out, err := b.CombinedOutput(); err != nil {
		t.Fatalf("run --fresh on the other node: %v %s", err, out)
	}
	code, out, errOut := cairnProcess(t, "diff", "--store", url, "--round", "1", "w")
	if code != exitDone || strings.Contains(out, "old agent") || !strings.Contains(out, "b.txt") || !strings.Contains(out, "+new agent") {
		t.Fatalf("diff --round 1 on this node: exit %d %q %s", code, out, errOut)
	}
	code, out, errOut = cairnProcess(t, "undo", "--store", url, "w")
	if code == exitDone || strings.Contains(out, "undid") || !strings.Contains(errOut, "round 1 changed files, and the node that ran it keeps") {
		t.Fatalf("undo on this node: exit %d %q %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(wsB, "b.txt")); err != nil {
		t.Fatalf("the new agent's file: %v", err)
	}
}
