package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// Regression: a call of a paused session was refused saying that `cairn
// resume AGENT` goes on, also for an agent whose turns come only from a
// client (served without a model of its own), which resume seals and
// stops. Such an agent is pointed to a new session only; an agent file
// with a model of its own to both.
func TestPausedSessionAdvisesWhatGoesOn(t *testing.T) {
	f := serve(t, "", nil)
	must(t, f.eng.Pause(context.Background(), "m"))
	_, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "cairn mcp --id m") || strings.Contains(err.Error(), "cairn resume") {
		t.Errorf("a paused session of an agent without a model: %v, want `cairn mcp --id m` and no `cairn resume`", err)
	}
	if got := f.sess.GoesOn(); got != "`cairn mcp --id m`" {
		t.Errorf("GoesOn = %q", got)
	}

	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "turns.yaml"), []byte("turns: [{text: done}]\n"), 0o644))
	af, err := host.ParseAgentFile([]byte("name: modelled\nmodel: {provider: script, script: turns.yaml}\nworkspace: ws\ntools: [{module: builtin}]\n"), dir)
	must(t, err)
	sess, err := f.eng.OpenSession(context.Background(), host.SessionOptions{Agent: af, ID: "own"})
	must(t, err)
	defer sess.Close()
	must(t, f.eng.Pause(context.Background(), "own"))
	_, err = sess.Call(context.Background(), "list_dir", []byte(`{}`), nil)
	if err == nil || !strings.Contains(err.Error(), "cairn mcp --id own") || !strings.Contains(err.Error(), "cairn resume own") {
		t.Errorf("a paused session of an agent with a model of its own: %v, want both ways on", err)
	}
}
