package pgstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a write refused by its fence (the lease taken over) whose
// read of the lease row, for the error, failed too (the database went
// away between the two) told the holder its lease "was released", which
// no one had said, with nothing to do about it. It says what is known:
// the fence refused the write, who holds the agent could not be read and
// why, and to take the agent again with `cairn resume`.
func TestFencedWriteWhoseLeaseRowCannotBeReadSaysSo(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	s := open(t, url, pgstore.WithTimeout(2*time.Second))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)
	pgstore.Pause(lock)
	// Another process took the agent over.
	execSQL(t, url, `UPDATE cairn_leases SET epoch = epoch + 1, holder_run = 'run-b' WHERE agent = 'a1'`)
	pgstore.OnFenced(t, func() { srv.Stop(t) })

	_, err = log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})
	if !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("a write its fence refused, the lease row then unreadable: %v, want it fenced", err)
	}
	for _, want := range []string{`agent "a1"`, "refused by its lease's fence", "could not be read", "database unavailable",
		"nothing more was committed", "cairn resume a1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "was released") {
		t.Errorf("the error says the lease was released: %v", err)
	}
}
