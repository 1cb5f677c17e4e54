package host

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a fork killed once its workspace was filled and in place,
// before it made the agent, left a whole workspace that only the same fork
// run again, with the same --as, finds; a fork whose new agent's id was
// made for it (no --as) cannot be run again as it, and its workspace was
// left for good, with nothing to say so. The fork's steps are run as the
// killed fork ran them (its mark in the store, let go without removing
// it), and the same fork run again over it edited is refused; cairn gc
// names the workspace and the fork, once, and leaves it; the same fork run
// again over it as it was filled makes the agent, and gc then names
// nothing and the store keeps no mark.
func TestGCNamesTheWorkspaceOfAForkKilledBeforeItMadeTheAgent(t *testing.T) {
	eng, store, _ := travelled(t)
	opts := ForkOptions{ID: "a", Past: true, AtRound: 4, As: "a-fork-1", Workspace: filepath.Join(t.TempDir(), "ws-a-fork-1")}
	src, ws, err := eng.forkFrom(opts)
	if err != nil {
		t.Fatal(err)
	}
	release, err := markFill(store, checkpoint.FillMark{Dir: opts.Workspace})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(opts.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := forkMark{Agent: opts.As, From: opts.ID, Round: src.Round, Past: true}
	if _, err := eng.fillForkWorkspace(ws, opts.Workspace, mark); err != nil {
		t.Fatal(err)
	}
	release(true) // as the kill lets go of it
	// The same fork run again over the workspace edited since is refused,
	// and leaves it as it is, marked.
	if err := os.WriteFile(filepath.Join(opts.Workspace, "seed.txt"), []byte("edited"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Fork(t.Context(), opts); !errors.Is(err, ErrWorkspaceDiffers) {
		t.Fatalf("the same fork run again over its workspace edited since: %v; want it refused", err)
	}

	for _, dry := range []bool{true, false} {
		got, err := Collect(t.Context(), store, checkpoint.Retention{DryRun: dry})
		if err != nil {
			t.Fatal(err)
		}
		want := checkpoint.UnmadeFork{Dir: opts.Workspace, Agent: opts.As, From: "a", Round: 4, Past: true}
		if len(got.Unmade) != 1 || got.Unmade[0] != want {
			t.Fatalf("gc (dry run %v) names as unmade %+v; want %+v", dry, got.Unmade, want)
		}
		if n, _ := os.ReadDir(opts.Workspace); len(n) == 0 {
			t.Fatalf("gc (dry run %v) emptied the unmade fork's workspace", dry)
		}
	}
	if err := os.WriteFile(filepath.Join(opts.Workspace, "seed.txt"), []byte("seed"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Fork(t.Context(), opts); err != nil {
		t.Fatalf("the same fork run again: %v", err)
	}
	got, err := Collect(t.Context(), store, checkpoint.Retention{})
	if err != nil || len(got.Unmade) != 0 {
		t.Fatalf("gc once the fork was run again names as unmade %+v (%v); want none", got.Unmade, err)
	}
	if marks, _ := os.ReadDir(filepath.Join(store.(*checkpoint.FileStore).Dir(), "fills")); len(marks) != 0 {
		t.Errorf("the store keeps %d marks of fills once every fill and fork is done", len(marks))
	}
}
