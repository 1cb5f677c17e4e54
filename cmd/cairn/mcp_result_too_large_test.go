package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: a result larger than an MCP message on stdio carries (an
// agent file's sandbox: {output} raised, a read_file of 9 MiB of quotes,
// twice that once escaped) was sent all the same: the SDK's client could
// not read it ("inbound JSON-RPC frame exceeded the configured maximum
// line length") and its connection ended, the session with it. The
// client is answered with an error result that says the result is
// journaled, where to read it and how to ask for less, and the session
// goes on.
func TestMCPResultTooLargeForTheClient(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "quotes.txt"), []byte(strings.Repeat(`"`, 9<<20)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: big
model: {provider: script}
workspace: ws
tools: [{module: builtin}]
sandbox: {output: 64MiB}
`), 0o644))
	cmd := exec.Command(bin, "mcp", "-f", filepath.Join(dir, "agent.yaml"), "--store", filepath.Join(dir, "store"),
		"--cache", cacheForTests(t), "--id", "big")
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.CommandTransport{Command: cmd}, nil)
	must(t, err)
	defer cs.Close()
	text, isError := callText(t, cs, "read_file", map[string]any{"path": "quotes.txt"})
	if !isError || !strings.Contains(text, "cairn log --json --round 1 big") || !strings.Contains(text, "sandbox: {output}") {
		t.Errorf("the answer to a result too large (isError %v):\n%.1000s", isError, text)
	}
	if text, isError := callText(t, cs, "list_dir", map[string]any{}); isError || !strings.Contains(text, "quotes.txt") {
		t.Errorf("the session did not go on: %v %s", isError, text)
	}
}
