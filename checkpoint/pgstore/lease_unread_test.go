package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: Summary took a lease it could not read for no lease, so
// `cairn ls` showed a running agent as interrupted while the database did
// not answer that question. It says instead that it could not tell.
func TestSummaryOfAnUnreadableLeaseSaysSo(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url, pgstore.WithTimeout(3*time.Second))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	defer log.Close()
	if sum, err := s.Summary("a1"); err != nil || !sum.Locked {
		t.Fatalf("summary of a running agent: %+v, %v", sum, err)
	}
	// Another session keeps the lease table from being read.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	must(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `LOCK TABLE cairn_leases IN ACCESS EXCLUSIVE MODE`)
	must(t, err)
	sum, err := s.Summary("a1")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Err == nil || !strings.Contains(sum.Err.Error(), "could not tell") {
		t.Fatalf("summary while the lease cannot be read: locked %v, err %v; want it to say it could not tell", sum.Locked, sum.Err)
	}
}
