package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: pause of an agent that cannot be read said "agent X is :
// agent is not running", the status of a Summary that has none. It says
// the agent is unreadable and why, with the store's error, which it
// wraps, and records nothing.
func TestPauseOfAnUnreadableAgentSaysWhy(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, "name: u\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns:\n  - text: done\n")
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "u", Prompt: "go"})
	must(t, err)
	dir := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", "u")
	snaps, err := filepath.Glob(filepath.Join(dir, "snap-*.cbor"))
	must(t, err)
	data, err := os.ReadFile(snaps[len(snaps)-1])
	must(t, err)
	for i := 60; i < min(260, len(data)); i++ {
		data[i] = 0xaa
	}
	must(t, os.WriteFile(snaps[len(snaps)-1], data, 0o600))
	_, readErr := store.Read("u")
	if readErr == nil {
		t.Fatal("the damaged agent reads")
	}

	err = eng.Pause(context.Background(), "u")
	if !errors.Is(err, ErrNotRunning) || !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("pause: %v; want ErrNotRunning and the store's ErrCorrupt", err)
	}
	if want := "agent u is unreadable: agent is not running, nothing to pause; " + readErr.Error(); err.Error() != want {
		t.Fatalf("pause says %q\nwant %q", err, want)
	}
	if strings.Contains(err.Error(), "is :") {
		t.Fatalf("pause says %q: an empty status", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pause")); !os.IsNotExist(err) {
		t.Fatalf("a refused pause left a request: %v", err)
	}
}
