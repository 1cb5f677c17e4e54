package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fork killed once its filled workspace was in place, run
// again, took the workspace as it found it: files edited, added or removed
// by hand in between were taken for the fork's, the agent made over them
// and its first past stored from them. The workspace is filled as a killed
// fork leaves it (in place, with its mark), of a past round and of the last
// round; edited, the fork run again is refused naming what differs and
// what to do, and no agent is made; put back, the fork run again is made.
func TestForkRunAgainRefusesTheWorkspaceItFilledWhenEditedSince(t *testing.T) {
	eng, _, _ := travelled(t)
	for _, opts := range []ForkOptions{
		{ID: "a", Past: true, AtRound: 4, As: "p"},
		{ID: "a", As: "l"},
	} {
		opts.Workspace = filepath.Join(t.TempDir(), opts.As)
		// What a fork killed once its workspace was in place leaves.
		src, ws, err := eng.forkFrom(opts)
		if err != nil {
			t.Fatal(err)
		}
		mark := forkMark{Agent: opts.As, From: opts.ID, Round: src.Round, Past: opts.Past}
		if err := os.Mkdir(opts.Workspace, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.fillForkWorkspace(ws, opts.Workspace, mark); err != nil {
			t.Fatal(err)
		}
		seed := filepath.Join(opts.Workspace, "seed.txt")
		if err := os.WriteFile(seed, []byte("edited by hand"), 0o640); err != nil {
			t.Fatal(err)
		}
		_, err = eng.Fork(t.Context(), opts)
		if !errors.Is(err, ErrWorkspaceDiffers) || !strings.Contains(err.Error(), "seed.txt (content)") {
			t.Fatalf("fork %s run again over a workspace edited since: %v; want it refused naming seed.txt", opts.As, err)
		}
		if eng.store.Exists(opts.As) {
			t.Fatalf("fork %s run again over a workspace edited since made the agent", opts.As)
		}
		if err := os.WriteFile(seed, []byte("seed"), 0o640); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Fork(t.Context(), opts); err != nil {
			t.Fatalf("fork %s run again over the workspace as it filled it: %v", opts.As, err)
		}
	}
}
