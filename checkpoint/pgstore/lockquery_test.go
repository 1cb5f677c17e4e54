package pgstore_test

import (
	"errors"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Locked reads the lease by the rule Summary's Locked uses: true while a
// process holds the agent, false once it let go and for an agent with no
// lease; an id that cannot be one is refused.
func TestLockedAgreesWithSummary(t *testing.T) {
	s := open(t, sharedURL(t))
	lock, err := s.Lock("a", checkpoint.ThisProcess("run-a"))
	must(t, err)
	log, err := s.Create("a", newState("a"))
	must(t, err)
	must(t, log.Close())
	for _, held := range []bool{true, false} {
		if !held {
			must(t, lock.Unlock())
		}
		locked, err := s.Locked("a")
		sum, _ := s.Summary("a")
		if err != nil || locked != held || sum.Locked != held {
			t.Fatalf("held %v: Locked = %v, %v; Summary.Locked = %v", held, locked, err, sum.Locked)
		}
	}
	if locked, err := s.Locked("nobody"); locked || err != nil {
		t.Fatalf("Locked of an agent with no lease = %v, %v", locked, err)
	}
	if _, err := s.Locked("../a"); !errors.Is(err, checkpoint.ErrInvalidID) {
		t.Fatalf("Locked of a bad id = %v, want ErrInvalidID", err)
	}
}
