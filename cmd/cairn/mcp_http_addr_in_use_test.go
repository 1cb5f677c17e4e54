package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn mcp --http ADDR` on an address another process
// listens on made the session's agent in the store first, then failed
// with listen's error alone: each try left an agent that never served,
// and the message did not say what to do. The address is taken before
// any agent is made, and the error names it and the way out.
func TestMCPHTTPAddressInUseMakesNoAgent(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	dir := t.TempDir()
	ws, store := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	must(t, os.Mkdir(ws, 0o755))
	for _, id := range []string{"busy", ""} {
		args := []string{"mcp", "--store", store, "--cache", cacheForTests(t), "--workspace", ws, "--http", ln.Addr().String()}
		if id != "" {
			args = append(args, "--id", id)
		}
		code, _, errOut := cairnProcess(t, args...)
		if code == exitDone || !strings.Contains(errOut, ln.Addr().String()) || !strings.Contains(errOut, "another --http address") ||
			strings.Contains(errOut, "serves") {
			t.Errorf("cairn mcp --http on a busy address (id %q): exit %d\n%s", id, code, errOut)
		}
	}
	if _, out, _ := cairnProcess(t, "ls", "--store", store); strings.Contains(out, "busy") || strings.Contains(out, "mcp-") {
		t.Errorf("agents were made by sessions that never served:\n%s", out)
	}
}
