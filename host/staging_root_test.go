package host

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: with a store that has no directory (memory, PostgreSQL),
// every agent's rounds' changes went to one shared directory, so diff and
// undo of one agent could read another's round of the same number.
func TestChangesRootIsTheAgentsOwn(t *testing.T) {
	for name, store := range map[string]checkpoint.Store{"memory": checkpoint.NewMemStore(), "file": mustFileStore(t)} {
		e := &Engine{store: store}
		if a, b := e.changesRoot("a1"), e.changesRoot("a2"); a == b {
			t.Errorf("%s store: agents a1 and a2 share %s", name, a)
		}
		if a, b := e.stagingRoot("a1"), e.stagingRoot("a2"); a == b {
			t.Errorf("%s store: agents a1 and a2 share staging %s", name, a)
		}
	}
}

func mustFileStore(t *testing.T) checkpoint.Store {
	s, err := checkpoint.OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}
