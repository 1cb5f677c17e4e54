package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression: the end of ServeIO's context (a signal to `cairn mcp`) did
// not stop a call in flight: the session waited for it to finish, however
// long it ran. The call stops, as a cancelled one does: its round is
// committed with a result saying so, its changes discarded.
func TestServeIOContextEndStopsCallInFlight(t *testing.T) {
	f := serve(t, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := newRawClient(t, ctx, f.srv, "2025-06-18", `{}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_and_wait","arguments":{"path":"x.txt","content":"staged"}}}`)
	waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "x.txt")
	cancel()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Fatal("ServeIO still serves 30 s after its context ended")
	}
	if _, err := os.Stat(filepath.Join(f.ws, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("x.txt reached the workspace: %v", err)
	}
	rec, err := f.store.Read("m")
	must(t, err)
	if rec.State.Round != 1 || len(rec.Tail) != 0 || !rec.State.Messages[1].IsError ||
		!strings.Contains(rec.State.Messages[1].Text, "cancel") {
		t.Errorf("round %d, %d open records, messages %+v; want round 1 committed, the call cancelled",
			rec.State.Round, len(rec.Tail), rec.State.Messages)
	}
}
