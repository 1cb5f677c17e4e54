package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn mcp` without --id made a new agent at every start, so
// a client that starts the server to list its tools, or a session closed
// at once, left an agent in `cairn ls` each time. The agent is made at
// the first call: a session without one leaves nothing in the store.
func TestMCPSessionWithoutCallsMakesNoAgent(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	ws, store := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644))
	serve := func(call bool) string {
		cmd := exec.Command(bin, "mcp", "--workspace", ws, "--store", store, "--cache", cacheForTests(t))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cs := stdioClient(t, cmd)
		tools, err := cs.ListTools(context.Background(), nil)
		must(t, err)
		if len(tools.Tools) == 0 {
			t.Fatal("no tools listed")
		}
		if call {
			if text, isErr := callText(t, cs, "read_file", map[string]any{"path": "a.txt"}); isErr || !strings.Contains(text, "hello") {
				t.Fatalf("read_file: %q", text)
			}
		}
		must(t, cs.Close())
		return stderr.String()
	}
	ls := func() string {
		out, err := exec.Command(bin, "ls", "--store", store, "--json").CombinedOutput()
		if err != nil {
			t.Fatalf("cairn ls: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for range 2 {
		serve(false)
	}
	if out := ls(); out != "" {
		t.Fatalf("sessions that took no call left agents:\n%s", out)
	}
	stderr := serve(true)
	out := ls()
	if strings.Count(out, "\n") != 0 || !strings.Contains(out, `"rounds":1`) {
		t.Fatalf("a session that took one call: cairn ls:\n%s\nstderr:\n%s", out, stderr)
	}
}
