package pgstore_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: a transaction that holds an agent's lease row and does not
// end — the server process of a writer whose node lost power mid-write
// waits for the rest of it, or a transaction left open by hand — kept
// every take of the agent, `resume --steal` too, waiting to the store's
// timeout, then said the database was unavailable and to check that
// PostgreSQL runs, which it did. A take now waits a third of the timeout
// for the row and says that another session holds it, naming that
// session's process, and how to end it.
func TestLeaseRowLockedByAnotherSessionIsSaid(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url, pgstore.WithTimeout(6*time.Second))
	committedAgent(t, s, "a1", 1)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	must(t, err)
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT agent FROM cairn_leases WHERE agent = 'a1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	pid := conn.PgConn().PID()

	start := time.Now()
	_, err = s.Steal("a1", checkpoint.ThisProcess("run-b"))
	took := time.Since(start)
	if err == nil {
		t.Fatal("the lease was stolen while another session held its row")
	}
	if errors.Is(err, pgstore.ErrUnavailable) || strings.Contains(err.Error(), "check that PostgreSQL is running") {
		t.Errorf("a row held by another session is reported as the database down: %v", err)
	}
	for _, want := range []string{`agent "a1"`, "another session", strconv.Itoa(int(pid)), "pg_terminate_backend"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if took > 4*time.Second {
		t.Errorf("the take waited %v, the store's timeout 6 s", took)
	}
}
