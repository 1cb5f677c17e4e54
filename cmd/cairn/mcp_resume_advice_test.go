package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox/overlay"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: after kill -9 of `cairn mcp` serving an agent with no model
// of its own, `cairn resume ID` sealed the call and said that `cairn mcp
// --id ID` goes on, and then "continue with `cairn resume ID`", which
// would only stop there again. It says what goes on, once.
func TestMCPResumeOfServedAgentAdvisesMCP(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, _ := servedAgent(t, bin)
	cmd := exec.Command(bin, flags...)
	cs := stdioClient(t, cmd)
	go cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write_and_wait",
		Arguments: map[string]any{"path": "x.txt", "content": "staged"}})
	staged := overlay.StagedFile(filepath.Join(store, "agents", "sess", "staging", "round-1", "mcp-1"), "x.txt")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(staged); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call staged nothing within a minute")
		}
	}
	must(t, cmd.Process.Kill())
	cmd.Wait()
	code, _, stderr := cairnProcess(t, "resume", "--store", store, "--cache", cacheForTests(t), "sess")
	if code != exitPaused || !strings.Contains(stderr, "`cairn mcp --id sess` goes on") ||
		strings.Contains(stderr, "`cairn resume sess`") {
		t.Errorf("cairn resume: exit %d, %s", code, stderr)
	}
}
