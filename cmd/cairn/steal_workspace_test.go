package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// `cairn resume --steal --workspace DIR` with a DIR that holds another
// workspace is refused with nothing changed, and nothing is: the lease is
// still the live holder's, at its epoch, and the holder's next write goes
// through. The check is made before the steal, not after it.
func TestStealRefusedForWorkspaceChangesNothing(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	flags := exampleAgent(t)
	flags[len(flags)-3] = url
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "pg1"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	s, err := pgstore.Open(context.Background(), url)
	must(t, err)
	defer s.Close()
	lock, err := s.Lock("pg1", checkpoint.Holder{PID: 4242, Host: "node-b", Run: "run-on-b", Started: time.Now()})
	must(t, err)
	defer lock.Unlock()
	before := leaseOf(t, url, "pg1")

	other := t.TempDir()
	must(t, os.WriteFile(filepath.Join(other, "notes.md"), []byte("not the agent's\n"), 0o644))
	code, _, errOut := cairn(t, "resume", "--store", url, "--cache", cacheForTests(t), "--steal",
		"--workspace", other, "pg1")
	if code == exitDone || !strings.Contains(errOut, "differs") || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("resume --steal into another workspace: exit %d: %s", code, errOut)
	}
	if after := leaseOf(t, url, "pg1"); after != before {
		t.Fatalf("the refused steal changed the lease: %+v, was %+v", after, before)
	}
	must(t, s.ClearPause("pg1")) // a write of the holder, behind its fence
	if b, _ := os.ReadFile(filepath.Join(other, "notes.md")); string(b) != "not the agent's\n" {
		t.Fatalf("the refused resume changed the directory: %q", b)
	}
}

// leaseRow is a lease as the database holds it.
type leaseRow struct {
	Epoch    int64
	Released bool
	Run      string
}

func leaseOf(t *testing.T, url, agent string) leaseRow {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	must(t, err)
	defer conn.Close(context.Background())
	var r leaseRow
	must(t, conn.QueryRow(context.Background(), `SELECT epoch, released, holder_run FROM cairn_leases WHERE agent = $1`, agent).
		Scan(&r.Epoch, &r.Released, &r.Run))
	return r
}
