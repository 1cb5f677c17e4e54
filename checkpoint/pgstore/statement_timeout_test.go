package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a statement the server cancelled at its statement_timeout
// (set in the URL, or for cairn's role or database) — a take or a commit
// that waited for a row another session held — failed with the server's
// bare "canceling statement due to statement timeout", which says
// neither that nothing was written nor what to do. It says both, and
// the agent keeps what it had.
func TestStatementTimeoutIsSaid(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url+"&statement_timeout=300")
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
	committedAgent(t, open(t, url), "a2", 1)
	_, err = tx.Exec(ctx, `SELECT 1 FROM cairn_leases WHERE agent = 'a2' FOR UPDATE`)
	must(t, err)

	said := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s went through a row another session holds", what)
		}
		for _, want := range []string{"statement_timeout", "changed nothing", "ALTER ROLE"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error does not say %q: %v", what, want, err)
			}
		}
	}
	_, err = log.Commit(append(roundRecords(2), checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})...)
	said("a commit", err)
	_, err = s.Lock("a2", checkpoint.ThisProcess("run-b"))
	said("a take", err)
	must(t, tx.Rollback(ctx))
	if rec, err := open(t, url).Read("a1"); err != nil || rec.State.Round != 1 || len(rec.Tail) != 0 {
		t.Fatalf("agent a1 after the refused commit: %v", err)
	}
}
