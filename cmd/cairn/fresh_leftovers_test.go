package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Regression: `cairn run --fresh` removes the agent's state, then what its
// last round left beside it (staging, kept changes, marks of delegations
// begun). A crash between the two left those behind, and the next run of
// the id, which found no agent, made a new one on them: its first
// delegations met the old agent's marks and were told their sub-agents
// were gone instead of running them. Real processes: a tree killed with
// SIGKILL while its sub-agents run, its files removed as such a crash
// leaves them, then run anew; every delegation runs and its answer
// reaches the parent.
func TestFreshRunAfterACutRemovalIgnoresWhatTheOldAgentLeft(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	agent := treeAgent(t, bin)
	cache := cacheForTests(t)
	store, ws := t.TempDir(), filepath.Join(t.TempDir(), "ws")
	must(t, os.Mkdir(ws, 0o755))
	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "lead", "--workspace", ws, "-f", agent)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	children := 0
	lines := bufio.NewReader(stdout)
	readLinesUntil(lines, &bytes.Buffer{}, func(line []byte) bool {
		var e treeEvent
		if json.Unmarshal(line, &e) == nil && e.Type == "tool_start" && e.Agent != "lead" {
			children++ // a child's call runs: its delegation's mark says "made"
		}
		return children == 2
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// What `cairn run --fresh` had removed when the crash came: the
	// sub-agents, then the parent's state; not yet what its round left.
	agents := filepath.Join(store, "agents")
	entries, err := os.ReadDir(agents)
	must(t, err)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "lead.") {
			must(t, os.RemoveAll(filepath.Join(agents, e.Name())))
		}
	}
	lead := filepath.Join(agents, "lead")
	left, err := os.ReadDir(lead)
	must(t, err)
	for _, e := range left {
		if n := e.Name(); strings.HasPrefix(n, "snap-") || strings.HasPrefix(n, "journal-") || n == "committed" || strings.HasPrefix(n, "past") {
			must(t, os.Remove(filepath.Join(lead, n)))
		}
	}
	if _, err := os.Stat(filepath.Join(lead, "delegations")); err != nil {
		t.Fatalf("the killed run left no marks of its delegations: %v", err)
	}
	must(t, os.RemoveAll(ws))
	must(t, os.Mkdir(ws, 0o755))

	out, err := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "lead", "--fresh", "--workspace", ws, "-f", agent).Output()
	if err != nil {
		t.Fatalf("the new run: %v\n%s", err, out)
	}
	for _, e := range jsonLines[struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}](out) {
		if e.Type == "warning" && strings.Contains(e.Text, "no longer in the store") {
			t.Errorf("the new agent was warned of the old one's sub-agents: %s", e.Text)
		}
	}
	checkTreeResults(t, bin, store)
	checkTreeWorkspace(t, ws, map[string]bool{})
}
