package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn mcp` had no --workspace-limit ("flag provided but
// not defined") and ignored $CAIRN_WORKSPACE_LIMIT, so a workspace past
// the default limit could not be served at all, though the error said to
// raise the limit or turn the copy off. The flag and the variable work as
// for `cairn run`: a limit refuses a workspace past it, and off serves
// any, an agent made so included.
func TestMCPWorkspaceLimitFlag(t *testing.T) {
	ws, store := t.TempDir(), t.TempDir()
	for i := range 10 {
		must(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i)), []byte("x"), 0o644))
	}
	args := []string{"mcp", "--workspace", ws, "--store", store, "--cache", cacheForTests(t)}
	code, _, stderr := cairn(t, append(args, "--id", "small", "--workspace-limit", "3,1MiB")...)
	if code == exitDone || !strings.Contains(stderr, "workspace too large") || !strings.Contains(stderr, "more than 3 files") {
		t.Errorf("--workspace-limit 3,1MiB: exit %d, %s", code, stderr)
	}
	code, _, stderr = cairn(t, append(args, "--id", "off", "--workspace-limit", "off")...)
	if code != exitDone || !strings.Contains(stderr, "agent off serves") {
		t.Errorf("--workspace-limit off: exit %d, %s", code, stderr)
	}
	code, _, stderr = cairn(t, append(args, "--id", "off", "--workspace-limit", "off")...)
	if code != exitDone {
		t.Errorf("the agent made with --workspace-limit off, served again with it: exit %d, %s", code, stderr)
	}
	t.Setenv("CAIRN_WORKSPACE_LIMIT", "3,1MiB")
	code, _, stderr = cairn(t, append(args, "--id", "env")...)
	if code == exitDone || !strings.Contains(stderr, "more than 3 files") {
		t.Errorf("CAIRN_WORKSPACE_LIMIT=3,1MiB: exit %d, %s", code, stderr)
	}
	code, _, stderr = cairn(t, append(args, "--id", "bad", "--workspace-limit", "lots")...)
	if code != exitUsage || !strings.Contains(stderr, "want FILES,SIZE") {
		t.Errorf("--workspace-limit lots: exit %d, %s", code, stderr)
	}
}
