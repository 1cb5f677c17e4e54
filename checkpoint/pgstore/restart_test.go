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

// The database going down mid-run fails the next write with a clear
// error; once it is back, the agent opens at its last committed round and
// goes on. Nothing committed is lost.
func TestDatabaseDownMidRun(t *testing.T) {
	srv := pgtest.Start(t)
	s := open(t, srv.NewDatabase(t), pgstore.WithTimeout(2*time.Second))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	for r := 1; r <= 3; r++ {
		commitRound(t, log, r)
	}
	srv.Stop(t)
	err = log.Append(roundRecords(4)...)
	if err == nil {
		_, err = log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 4})
	}
	if !errors.Is(err, pgstore.ErrUnavailable) || !strings.Contains(err.Error(), "database unavailable") {
		t.Fatalf("a write with the database down: %v, want ErrUnavailable", err)
	}
	srv.Start(t)
	if err := log.Sync(); !errors.Is(err, pgstore.ErrUnavailable) {
		t.Fatalf("the log went on after a write it cannot vouch for: %v", err)
	}
	rec, log2, err := s.Open("a1")
	must(t, err)
	if rec.State.Round != 3 || len(rec.Tail) != 0 {
		t.Fatalf("after the restart: round %d, tail %d", rec.State.Round, len(rec.Tail))
	}
	commitRound(t, log2, 4)
	if rec, _ := s.Read("a1"); rec.State.Round != 4 || rec.State.ToolCalls != 4 {
		t.Fatalf("round %d, %d calls", rec.State.Round, rec.State.ToolCalls)
	}
}

// Restarts between rounds (pg_ctl restart cuts every connection) are not
// seen by the run: a write that never reached the server is sent again on
// a new connection. Every round is committed once.
func TestDatabaseRestartsBetweenRounds(t *testing.T) {
	srv := pgtest.Start(t)
	s := open(t, srv.NewDatabase(t))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	for r := 1; r <= 8; r++ {
		if r%3 == 0 {
			srv.Restart(t)
		}
		commitRound(t, log, r)
	}
	rec, err := s.Read("a1")
	must(t, err)
	if rec.State.Round != 8 || rec.State.ToolCalls != 8 || len(rec.Tail) != 0 {
		t.Fatalf("round %d, %d calls, tail %d", rec.State.Round, rec.State.ToolCalls, len(rec.Tail))
	}
	sameState(t, rec.State, log.State())
}
