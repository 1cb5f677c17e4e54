package pgstore_test

import (
	"context"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a restart of the database in the middle of Open's
// migration (a run or resume started as the server restarted, on a
// database an older cairn had set up) failed Open as the database
// unavailable, where a write meeting the restart is sent again. The
// migration, one transaction, is rolled back whole by the restart and
// run again once the server is back: Open goes on, at this build's
// version, and the store works.
func TestMigrationThroughRestart(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	ctx := context.Background()
	must(t, pgstore.MigrateTo(ctx, url, 5))
	restarts := 0
	pgstore.OnMigration(t, func() {
		if restarts == 0 {
			restarts++
			srv.Restart(t)
		}
	})
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatalf("Open, the database restarted in its migration: %v", err)
	}
	defer s.Close()
	if restarts != 1 {
		t.Fatalf("the migration met %d restarts, want 1", restarts)
	}
	var v int
	query(t, url, `SELECT version FROM cairn_schema`, nil, &v)
	if v != pgstore.SchemaVersion() {
		t.Fatalf("schema version %d after Open, want %d", v, pgstore.SchemaVersion())
	}
	committedAgent(t, s, "a1", 2)
}
