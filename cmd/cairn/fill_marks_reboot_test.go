package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: the marks of fills of a PostgreSQL store were kept in the
// temp directory, which a reboot (tmpfs) or a cleaning of it empties, so
// that cairn gc no longer found what a fork killed while it filled left,
// and it stayed for good. They are kept in the user's state directory,
// as the file store keeps its own in the store. A real cairn fork of an
// agent kept in PostgreSQL is killed while it fills; the temp directory is
// emptied, as a reboot does; cairn gc still removes what the fork left.
func TestAFillOfAPostgresAgentKilledIsFoundAfterTheTempDirectoryIsEmptied(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	url := pgtest.Shared(t).NewDatabase(t)
	undoAgentIn(t, bin, url)
	tmp, state := t.TempDir(), t.TempDir()
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_STATE_HOME="+state)
		return c
	}
	parent := t.TempDir()
	left := killWhileFilling(t, cmd("fork", "--store", url, "--at-round", "1", "--as", "f",
		"-w", filepath.Join(parent, "unrelated"), "v"), parent)
	removeAllIn(t, tmp) // a reboot
	out, err := cmd("gc", "--store", url).CombinedOutput()
	if err != nil {
		t.Fatalf("cairn gc: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "removed "+left+",") {
		t.Errorf("cairn gc after the temp directory was emptied does not say it removed %s:\n%s", left, out)
	}
	noFillIn(t, parent)
}

// A fork of an agent kept in PostgreSQL where neither XDG_STATE_HOME nor
// HOME names a directory to keep its fill's mark in is refused before it
// makes anything, saying so, where its mark went to the temp directory.
func TestAForkOfAPostgresAgentWithNowhereToMarkItsFillIsRefused(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	url := pgtest.Shared(t).NewDatabase(t)
	undoAgentIn(t, bin, url)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			env = append(env, kv)
		}
	}
	parent := t.TempDir()
	fork := exec.Command(bin, "fork", "--store", url, "--cache", cacheForTests(t), "--at-round", "1", "--as", "f", "-w", filepath.Join(parent, "ws"), "v")
	fork.Env = env
	out, err := fork.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "set XDG_STATE_HOME, or HOME") {
		t.Errorf("the fork with nowhere to mark its fill: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("the refused fork left %d entries in %s", len(entries), parent)
	}
}
