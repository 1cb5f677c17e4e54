package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: on PostgreSQL, what a removed agent left on this node
// beside its rows (staging, kept changes, marks of delegations begun, in
// the node's directory for the store) was not cleared when a new agent of
// its id was made, as it is in a file store's agent directory: after a
// removal cut short between the rows and those, the new agent's first
// delegations met the old agent's marks and were told their sub-agents
// were gone instead of running them. Real processes and a real server: a
// tree killed with SIGKILL while its sub-agents run, its rows removed as
// such a crash leaves them, then run anew; every delegation runs and its
// answer reaches the parent.
func TestNewAgentOnPostgreSQLIgnoresWhatARemovedAgentOfItsIDLeft(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	agent := treeAgent(t, bin)
	cache := cacheForTests(t)
	url := pgtest.Shared(t).NewDatabase(t)
	ws := filepath.Join(t.TempDir(), "ws")
	must(t, os.Mkdir(ws, 0o755))
	cmd := exec.Command(bin, "run", "--store", url, "--cache", cache, "--json", "--id", "lead", "--workspace", ws, "-f", agent)
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

	// What a removal had done when the crash came: the sub-agents' rows,
	// then the parent's; not yet what its round left on this node.
	s, err := pgstore.Open(context.Background(), url)
	must(t, err)
	all, err := s.List()
	must(t, err)
	var ids []string
	for _, a := range all {
		if strings.HasPrefix(a.ID, "lead.") {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("the killed run made sub-agents %q", ids)
	}
	for _, id := range append(ids, "lead") {
		l, err := s.Lock(id, checkpoint.ThisProcess("rm"))
		must(t, err)
		must(t, s.Remove(id))
		must(t, l.Unlock())
	}
	sum := sha256.Sum256([]byte(s.Identity()))
	s.Close()
	marks := filepath.Join(os.TempDir(), fmt.Sprintf("cairn-staging-%d", os.Getuid()), hex.EncodeToString(sum[:8]), "lead", "delegations")
	if _, err := os.Stat(marks); err != nil {
		t.Fatalf("the killed run left no marks of its delegations: %v", err)
	}
	must(t, os.RemoveAll(ws))
	must(t, os.Mkdir(ws, 0o755))

	out, err := exec.Command(bin, "run", "--store", url, "--cache", cache, "--json", "--id", "lead", "--workspace", ws, "-f", agent).Output()
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
	checkTreeResults(t, bin, url)
	checkTreeWorkspace(t, ws, map[string]bool{})
}
