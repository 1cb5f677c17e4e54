package checkpoint

import (
	"errors"
	"testing"
	"time"
)

// lockQueryAgrees checks that Locked says what Summary's Locked says, of
// an agent held, let go and unknown, and refuses an id that cannot be
// one: a follower asks Locked instead of a Summary, which reads the
// whole state.
func lockQueryAgrees(t *testing.T, s interface {
	Store
	LockQuery
}) {
	t.Helper()
	lock, err := s.Lock("a", ThisProcess("run-1"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := s.Create("a", NewState("a", Definition{Workspace: "/ws"}, Labels{}, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	for _, held := range []bool{true, false} {
		if !held {
			if err := lock.Unlock(); err != nil {
				t.Fatal(err)
			}
		}
		locked, err := s.Locked("a")
		sum, _ := s.Summary("a")
		if err != nil || locked != held || sum.Locked != held {
			t.Fatalf("held %v: Locked = %v, %v; Summary.Locked = %v", held, locked, err, sum.Locked)
		}
	}
	if locked, err := s.Locked("nobody"); locked || err != nil {
		t.Fatalf("Locked of an unknown agent = %v, %v", locked, err)
	}
	if _, err := s.Locked("../a"); !errors.Is(err, ErrInvalidID) {
		t.Fatalf("Locked of a bad id = %v, want ErrInvalidID", err)
	}
}

func TestLockQueryAgreesWithSummary(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		s, err := OpenFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		lockQueryAgrees(t, s)
	})
	t.Run("memory", func(t *testing.T) { lockQueryAgrees(t, NewMemStore()) })
}
