package pgstore_test

import (
	"errors"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: a lease row deleted under its holder (by hand, to revoke
// the lease, or by a restore that left cairn_leases out) was made again
// by the next take from epoch 0, giving the new holder the epoch the old
// one still held (1 for an agent's first run): the old holder's writes
// passed the fence, and two processes wrote one agent. The new row's
// epoch starts past every epoch the database has given, so the old holder
// is fenced and the agent keeps only the new holder's round.
func TestLeaseRowDeletedUnderHolderFencesIt(t *testing.T) {
	url := sharedURL(t)
	a := open(t, url)
	lockA, err := a.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lockA.Unlock()
	logA, err := a.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, logA, 1)
	pgstore.Pause(lockA)
	execSQL(t, url, `DELETE FROM cairn_leases WHERE agent = 'a1'`)

	b := open(t, url)
	lockB, err := b.Lock("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lockB.Unlock()
	_, logB, err := b.Open("a1")
	must(t, err)
	commitRound(t, logB, 2)

	err = logA.Append(roundRecords(2)...)
	if err == nil {
		_, err = logA.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})
	}
	if !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("the old holder's write after its lease row was deleted and taken again: %v, want it fenced", err)
	}
	rec, err := open(t, url).Read("a1")
	must(t, err)
	if rec.State.Round != 2 || rec.State.ToolCalls != 2 || len(rec.Tail) != 0 {
		t.Fatalf("agent a1 at round %d, %d calls, tail %d; want round 2 of run-b alone", rec.State.Round, rec.State.ToolCalls, len(rec.Tail))
	}
}
