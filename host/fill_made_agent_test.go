package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a fork killed once it had made the new agent, before it let
// go of its mark in the store, left a mark naming the directories it made
// for the agent's workspace, and gc removed the workspace when it was
// empty (an agent with no files), though it was the agent's. The fork's
// mark is left as such a kill leaves it, naming a workspace made empty;
// cairn gc leaves the agent's workspace, and names nothing.
func TestGCLeavesTheEmptyWorkspaceOfAnAgentAForkKilledAfterItMadeIt(t *testing.T) {
	eng, store, _ := travelled(t)
	dir := filepath.Join(t.TempDir(), "new", "ws")
	f, err := eng.Fork(context.Background(), ForkOptions{ID: "a", As: "b", Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(f.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(f.Workspace, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	release, err := markFill(store, checkpoint.FillMark{Dir: f.Workspace, Makes: []string{filepath.Dir(f.Workspace), f.Workspace}, Agent: "b"})
	if err != nil {
		t.Fatal(err)
	}
	release(true) // as the kill lets go of it

	got, err := Collect(context.Background(), store, checkpoint.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Made) != 0 {
		t.Errorf("gc removed %v, the workspace of agent b and the directory above it", got.Made)
	}
	if _, err := os.Stat(f.Workspace); err != nil {
		t.Errorf("gc removed the workspace of agent b: %v", err)
	}
}
