package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: gc of a PostgreSQL store that met an agent it could not
// read advised what fits a directory — to run it where the store's files
// may be written, and to restore the agent's directory or move it out of
// the store — none of which a database has. It now says what fits one:
// the agent's own error tells how to mend it (a backup of the database,
// or its rows deleted), and gc runs again after.
func TestGCOfADamagedPostgresAgentAdvisesTheDatabase(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	if code, _, errOut := cairn(t, "run", "--store", url, "--cache", cacheForTests(t), "--id", "dmg", "-f", crashAgent(t)); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	_, err = conn.Exec(ctx, `UPDATE cairn_agents SET snapshot = substring(snapshot from 1 for 10), snapshot_crc = NULL WHERE id = 'dmg'`)
	conn.Close(ctx)
	must(t, err)
	code, _, errOut := cairn(t, "gc", "--store", url)
	if code != exitFailed || !strings.Contains(errOut, "gc could not lock or read agent dmg") {
		t.Fatalf("gc: exit %d, stderr %s", code, errOut)
	}
	for _, wrong := range []string{"directory", "its files", "out of the store"} {
		if strings.Contains(errOut, wrong) {
			t.Errorf("gc of a database advises about %q: %s", wrong, errOut)
		}
	}
	if !strings.Contains(errOut, "backup of the database") {
		t.Errorf("gc does not say how to mend a database: %s", errOut)
	}
}
