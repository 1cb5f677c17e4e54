package host

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// A fork killed once it had made the new agent, before it removed its
// mark from the agent's workspace, left the mark there, a file the agent
// would see; the same fork run again removes it and says what was forked,
// and any other fork as that agent is refused as one that exists.
func TestForkRunAgainAfterItMadeTheAgentRemovesItsMark(t *testing.T) {
	eng, _, _ := travelled(t)
	ws := filepath.Join(t.TempDir(), "f")
	opts := ForkOptions{ID: "a", Past: true, AtRound: 6, As: "f", Workspace: ws}
	if _, err := eng.Fork(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, forkMarkName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the fork left its mark: %v", err)
	}
	// As the killed fork left it.
	if err := (forkMark{Agent: "f", From: "a", Round: 6, Past: true}).write(ws); err != nil {
		t.Fatal(err)
	}
	other := opts
	other.AtRound = 5
	if _, err := eng.Fork(t.Context(), other); !errors.Is(err, checkpoint.ErrExists) {
		t.Fatalf("a fork at another round as the same agent: %v, want it refused as one that exists", err)
	}
	f, err := eng.Fork(t.Context(), opts)
	if err != nil {
		t.Fatalf("the same fork run again: %v", err)
	}
	if f.Agent != "f" || f.From != "a" || f.Round != 6 || f.Workspace != ws {
		t.Errorf("the fork run again says %+v", f)
	}
	if _, err := os.Stat(filepath.Join(ws, forkMarkName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the fork run again left the mark: %v", err)
	}
	if _, err := eng.Fork(t.Context(), opts); !errors.Is(err, checkpoint.ErrExists) {
		t.Fatalf("the fork run once more: %v, want it refused as one that exists", err)
	}
}
