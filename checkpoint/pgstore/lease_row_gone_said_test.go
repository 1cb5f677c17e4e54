package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: a holder whose lease row was deleted from cairn_leases (by
// hand, to revoke the lease, or by a restore that left the table out),
// and not yet taken again, was told at its next write that its lease "was
// released", which it had not done, with nothing to do about it. It is
// told the row is gone, and how to go on: to take the agent, or the
// workflow, again.
func TestFencedByDeletedLeaseRowSaysSo(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)
	wlock, err := s.Lock("w1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer wlock.Unlock()
	must(t, s.PutWorkflow(workflowRecord("w1", "run-a", 1)))
	pgstore.Pause(lock)
	pgstore.Pause(wlock)
	execSQL(t, url, `DELETE FROM cairn_leases`)

	_, agentErr := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})
	workflowErr := s.PutWorkflow(workflowRecord("w1", "run-a", 2))
	for what, err := range map[string]error{"agent \"a1\"": agentErr, "workflow \"w1\"": workflowErr} {
		if !errors.Is(err, pgstore.ErrFenced) {
			t.Fatalf("%s's write with its lease row deleted: %v, want it fenced", what, err)
		}
		for _, want := range []string{what, "lease row", "cairn_leases", "nothing more was committed", "resume"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
		}
		if strings.Contains(err.Error(), "was released") {
			t.Errorf("the error says the lease was released: %v", err)
		}
	}
}
