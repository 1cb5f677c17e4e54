package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a commit whose statement an operator cancelled on the
// server (pg_cancel_backend, say to end a wait they judged stuck) failed
// with the server's bare "canceling statement due to user request", which
// says neither that nothing was written nor what to do. It says both, and
// the agent keeps what it had.
func TestCancelledStatementIsSaid(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 1)
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	_, log, err := s.Open("a1")
	must(t, err)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	must(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `SELECT 1 FROM cairn_leases WHERE agent = 'a1' FOR UPDATE`)
	must(t, err)

	errs := make(chan error, 1)
	go func() {
		_, err := log.Commit(append(roundRecords(2), checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})...)
		errs <- err
	}()
	op, err := pgx.Connect(ctx, url)
	must(t, err)
	defer op.Close(ctx)
	var err2 error
	for cancelled := false; !cancelled; {
		select {
		case err2 = <-errs:
			t.Fatalf("the commit ended before it could be cancelled: %v", err2)
		default:
		}
		must(t, op.QueryRow(ctx, `SELECT count(pg_cancel_backend(pid)) > 0 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&cancelled))
		time.Sleep(10 * time.Millisecond)
	}
	err = <-errs
	if err == nil {
		t.Fatal("a cancelled commit went through")
	}
	for _, want := range []string{"cancelled", "pg_cancel_backend", "changed nothing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	must(t, tx.Rollback(ctx))
	if rec, err := open(t, url).Read("a1"); err != nil || rec.State.Round != 1 || len(rec.Tail) != 0 {
		t.Fatalf("agent a1 after the cancelled commit: %v", err)
	}
}
