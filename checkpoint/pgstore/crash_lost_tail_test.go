package pgstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a crash of the server loses the appends it had not yet
// written out (they are committed without waiting for the disk), and the
// run, its next append sent again on a new connection, went on writing
// after the hole: the agent was then refused as corrupt ("row seq N
// missing"). The append after the crash now finds the rows before it
// gone and stops the run, writing nothing; the agent reads back at its
// last durable records and goes on.
func TestServerCrashLosesAppendsNotTheAgent(t *testing.T) {
	srv, s, log := agentOnACrashableServer(t)
	recs := roundRecords(2)
	var err error
	lost := false
	for try := 0; try < 5 && !lost; try++ {
		must(t, log.Append(recs[0]))
		srv.Crash(t)
		srv.Start(t)
		err = log.Append(recs[1])
		if err != nil {
			lost = true
			break
		}
		rec, rerr := s.Read("a1")
		if rerr != nil {
			t.Fatalf("after a crash of the server, the run went on and the agent is refused: %v", rerr)
		}
		if rec.State.Round != 1 {
			t.Fatalf("round %d", rec.State.Round)
		}
		// The append survived the crash: try again from a new round.
		must(t, log.Append(recs[2]))
		_, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})
		must(t, err)
		recs = roundRecords(3 + try)
	}
	if !lost {
		t.Skip("no crash of the server lost an append in five tries")
	}
	if !errors.Is(err, pgstore.ErrUnavailable) {
		t.Fatalf("the append after the lost one: %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"lost", "resume"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	rec, log2, err := s.Open("a1")
	if err != nil {
		t.Fatalf("open after the crash: %v", err)
	}
	round := rec.State.Round
	commitRound(t, log2, round+1)
	if rec, err := s.Read("a1"); err != nil || rec.State.Round != round+1 {
		t.Fatalf("after going on: %v", fmt.Sprint(err))
	}
}

// Regression: a Sync with nothing new to write after a crash of the
// server lost the appends before it (a call's result, appended as the
// call finished, lost while the round's other calls ran) marked them
// durable all the same: the agent was then refused for good as having
// lost committed data. The Sync now finds them gone and fails, marking
// nothing; the agent reads back at what the server kept.
func TestServerCrashLostAppendsAreNotMarkedDurable(t *testing.T) {
	srv, s, log := agentOnACrashableServer(t)
	var err error
	for try := 0; ; try++ {
		must(t, log.Append(roundRecords(2 + try)[:2]...))
		srv.Crash(t)
		srv.Start(t)
		err = log.Sync()
		if _, rerr := s.Read("a1"); rerr != nil {
			t.Fatalf("after a crash of the server and a Sync (%v), the agent is refused: %v", err, rerr)
		}
		if err != nil {
			break
		}
		if try == 4 {
			t.Skip("no crash of the server lost an append in five tries")
		}
		must(t, log.Append(roundRecords(2 + try)[2]))
		_, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2 + try})
		must(t, err)
	}
	if !errors.Is(err, pgstore.ErrUnavailable) || !strings.Contains(err.Error(), "lost") {
		t.Fatalf("the Sync after the lost appends: %v, want ErrUnavailable saying they were lost", err)
	}
	rec, log2, err := s.Open("a1")
	must(t, err)
	commitRound(t, log2, rec.State.Round+1)
}

// agentOnACrashableServer starts a server of the test's own, which it may
// crash, and returns it, the store and the log of agent a1, locked by
// run-a and at round 1.
func agentOnACrashableServer(t *testing.T) (*pgtest.Server, *pgstore.Store, checkpoint.Log) {
	t.Helper()
	if testing.Short() {
		t.Skip("crashes and starts a server of its own")
	}
	srv := pgtest.Start(t)
	s := open(t, srv.NewDatabase(t))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	t.Cleanup(func() { lock.Unlock() })
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)
	return srv, s, log
}
