package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// A round's commit whose server process is ended (pg_terminate_backend)
// while it waits inside its transaction was not committed: it is sent
// again on a new connection and committed once, with every record of the
// round once and in order.
func TestCommitTerminatedMidTransactionCommittedOnce(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)

	// Another session holds the agent's row, so that the commit waits in
	// the middle of its transaction, after its fence and its records.
	ctx := context.Background()
	holder, err := pgx.Connect(ctx, url)
	must(t, err)
	defer holder.Close(ctx)
	tx, err := holder.Begin(ctx)
	must(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM cairn_agents WHERE id = 'a1' FOR UPDATE`)
	must(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := log.Commit(append(roundRecords(2), checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})...)
		done <- err
	}()
	var pid int32
	for pid == 0 {
		time.Sleep(10 * time.Millisecond)
		err := holder.QueryRow(ctx, `SELECT coalesce(max(pid), 0) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&pid)
		must(t, err)
	}
	var ended bool
	must(t, holder.QueryRow(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ended))
	must(t, tx.Rollback(ctx))
	if err := <-done; err != nil {
		t.Fatalf("commit whose server process was ended before it committed: %v", err)
	}
	commitRound(t, log, 3)

	rec, err := open(t, url).Read("a1")
	must(t, err)
	if rec.State.Round != 3 || rec.State.ToolCalls != 3 || len(rec.Tail) != 0 {
		t.Fatalf("round %d, %d calls, tail %d; want round 3, 3 calls", rec.State.Round, rec.State.ToolCalls, len(rec.Tail))
	}
	var rows, seqs int
	query(t, url, `SELECT count(*), count(DISTINCT seq) FROM cairn_journal WHERE agent = 'a1'`, nil, &rows, &seqs)
	if rows != seqs {
		t.Fatalf("%d journal rows for %d sequence numbers", rows, seqs)
	}
}
