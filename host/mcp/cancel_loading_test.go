package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// Regression: a call a client cancelled while its tool's module was still
// being compiled (the first call of a session on a cold cache) was
// committed with the result "context canceled", which says neither what
// was stopped nor that nothing changed.
func TestCallCancelledWhileItsModuleLoads(t *testing.T) {
	testModules(t)
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	af, err := host.ParseAgentFile([]byte(`name: cold
model: {provider: script}
workspace: ws
tools: [{module: `+toolsWasm+`, grant: {workspace: rw}}]
`), dir)
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	ctx := context.Background()
	// A cache of its own, empty: the module compiles for a second or more.
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: filepath.Join(dir, "cache"), Store: store})
	must(t, err)
	defer eng.Close(ctx)
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: "c"})
	must(t, err)
	defer sess.Close()
	cctx, cancel := context.WithCancel(ctx)
	_, err = sess.CallWith(cctx, "count", []byte(`{"text":"a b"}`), host.CallOptions{Started: cancel})
	must(t, err)
	rec, err := store.Read("c")
	must(t, err)
	m := rec.State.Messages[len(rec.State.Messages)-1]
	if !m.IsError || !strings.Contains(m.Text, "count was stopped before it started") || !strings.Contains(m.Text, "it changed nothing") {
		t.Errorf("the result of the call cancelled while its module loaded: %q", m.Text)
	}
}
