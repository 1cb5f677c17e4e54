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

// Regression: the approval question about a call quoted its arguments
// whole, escaped once more as the question's text: a write_file of 6 MiB
// of quotes, a request well within what stdio takes, made a question of
// more than 24 MiB, past what the client reads, and the SDK's client
// failed the call ("inbound JSON-RPC frame exceeded the configured
// maximum line length") where its user should have been asked. The
// question shows each argument cut short, says so, and the call, once
// accepted, runs with its arguments whole.
func TestMCPQuestionAboutHugeArguments(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: asks
model: {provider: script}
workspace: ws
tools: [{module: builtin}]
approvals:
  - {tool: write_file, action: ask}
`), 0o644))
	var question string
	client := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			question = r.Params.Message
			return &sdk.ElicitResult{Action: "accept"}, nil
		}})
	cmd := exec.Command(bin, "mcp", "-f", filepath.Join(dir, "agent.yaml"), "--store", filepath.Join(dir, "store"),
		"--cache", cacheForTests(t), "--id", "asks")
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	must(t, err)
	defer cs.Close()
	content := strings.Repeat(`"`, 6<<20)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write_file",
		Arguments: map[string]any{"path": "quotes.txt", "content": content}})
	if err != nil {
		t.Fatalf("the call failed where its user was to be asked: %v", err)
	}
	if res.IsError {
		t.Fatalf("the call, accepted, failed: %v", res.Content)
	}
	if len(question) > 64<<10 || !strings.Contains(question, `"path":"quotes.txt"`) || !strings.Contains(question, "6291456") {
		t.Errorf("the question (%d bytes) does not show the path and the size of what it cut:\n%.600s", len(question), question)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "quotes.txt")); err != nil || string(b) != content {
		t.Errorf("the file written is not the content sent (%d bytes, %v)", len(b), err)
	}
}
