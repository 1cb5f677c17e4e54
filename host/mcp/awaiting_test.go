package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// Regression: a session opened on an agent whose run had stopped awaiting
// a person's decision (`cairn approve` or `cairn deny`) denied the call
// itself, saying no one was there to approve it, and went on: the
// decision the person had been told was theirs was made for them. As
// `cairn run --id` does, the session is refused, naming the call and the
// commands that decide it, and the agent is left as it was.
func TestSessionOfAgentAwaitingApprovalIsRefused(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "turns.yaml"), []byte(`turns:
  - tool_calls: [{name: write_file, input: {path: w.txt, content: hi}}]
  - text: done
`), 0o644))
	af, err := host.ParseAgentFile([]byte(`name: asks
model: {provider: script, script: turns.yaml}
workspace: ws
tools: [{module: builtin}]
approvals: [{tool: write_file, action: ask}]
`), dir)
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store})
	must(t, err)
	defer eng.Close(ctx)
	res, err := eng.Run(ctx, host.RunOptions{Agent: af, ID: "a", Prompt: "write"})
	must(t, err)
	if res.Status != host.StatusAwaitingApproval {
		t.Fatalf("the run ended %s, want awaiting approval", res.Status)
	}
	sess, err := eng.OpenSession(ctx, host.SessionOptions{ID: "a"})
	if err == nil {
		sess.Close()
	}
	if err == nil || !errors.Is(err, host.ErrInterrupted) || !strings.Contains(err.Error(), "awaiting approval of call_1_0 (write_file)") ||
		!strings.Contains(err.Error(), "cairn approve a call_1_0") || !strings.Contains(err.Error(), "cairn mcp --id a") {
		t.Errorf("a session of an agent awaiting approval: %v", err)
	}
	rec, err := store.Read("a")
	must(t, err)
	if rec.State.Status != checkpoint.StatusApproval {
		t.Errorf("the agent's status after the refused session: %q", rec.State.Status)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "w.txt")); !os.IsNotExist(err) {
		t.Errorf("w.txt: %v", err)
	}
	// Once decided, a session finishes the round: the approved call runs.
	must(t, eng.Decide(ctx, "a", "call_1_0", host.Decision{Approved: true}))
	sess, err = eng.OpenSession(ctx, host.SessionOptions{ID: "a"})
	must(t, err)
	sess.Close()
	if b, err := os.ReadFile(filepath.Join(dir, "ws", "w.txt")); err != nil || string(b) != "hi" {
		t.Errorf("w.txt after the approval and a session: %q %v", b, err)
	}
}
