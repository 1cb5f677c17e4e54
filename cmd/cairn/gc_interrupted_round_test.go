package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: gc removed, once older than its grace, the files an
// interrupted round's finished calls wrote, which the store keeps so that
// another node can resume the round: nothing that gc reads named them. An
// agent interrupted overnight (its node gone, or a call awaiting a
// person) and collected then could not be resumed elsewhere: "blob …:
// not found". gc now keeps the files of an interrupted round's changes.
func TestGCKeepsTheFilesOfAnInterruptedRound(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a call to its time limit")
	}
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	dir := interruptedWithAppliedCall(t, url)
	// An hour and more later, by the database's clock.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	_, err = conn.Exec(ctx, `UPDATE cairn_blobs SET stored = now() - interval '2 hours'`)
	conn.Close(ctx)
	must(t, err)
	if code, out, errOut := cairnProcess(t, "gc", "--store", url); code != exitDone {
		t.Fatalf("gc: exit %d %s%s", code, out, errOut)
	}
	// Another node: its staging is not the one that ran the round.
	elsewhere := filepath.Join(dir, "elsewhere")
	if code, _, errOut := cairnProcess(t, "resume", "--store", url, "--cache", cacheForTests(t), "--workspace", elsewhere, "y"); code != exitDone {
		t.Fatalf("resume elsewhere after gc: exit %d %s", code, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(elsewhere, "log.txt")); string(got) != "line 1\n" {
		t.Fatalf("log.txt elsewhere: %q", got)
	}
}
