package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Regression: with a store that has no directory, an agent's staging was
// named by its id alone, in a directory every user and store shared, so
// two runs of agents of one id in two databases at once removed each
// other's staged changes ("keep the changes of call …: rename …: no such
// file or directory"). Each store has its own, in this user's own.
func TestStagingRootIsTheStoresOwn(t *testing.T) {
	a, b := &Engine{store: checkpoint.NewMemStore()}, &Engine{store: checkpoint.NewMemStore()}
	if ra, rb := a.stagingRoot("w"), b.stagingRoot("w"); ra == rb {
		t.Errorf("agents w of two stores share staging %s", ra)
	}
	if ra, again := a.stagingRoot("w"), a.stagingRoot("w"); ra != again {
		t.Errorf("one store's staging of w moved: %s, then %s", ra, again)
	}
	named := func(id string) *Engine { return &Engine{store: identified{checkpoint.NewMemStore(), id}} }
	if ra, rb := named("db1").stagingRoot("w"), named("db1").stagingRoot("w"); ra != rb {
		t.Errorf("two stores of one identity stage w apart: %s and %s", ra, rb)
	}
	if ra, rb := named("db1").stagingRoot("w"), named("db2").stagingRoot("w"); ra == rb {
		t.Errorf("stores of two identities share staging %s", ra)
	}
	own := filepath.Join(os.TempDir(), fmt.Sprintf("cairn-staging-%d", os.Getuid()))
	if r := a.stagingRoot("w"); !strings.HasPrefix(r, own+string(filepath.Separator)) {
		t.Errorf("staging %s is not in this user's own %s", r, own)
	}
}

// identified is a store with an Identity, as a database's.
type identified struct {
	*checkpoint.MemStore
	id string
}

func (s identified) Identity() string { return s.id }
