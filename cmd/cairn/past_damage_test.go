package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// A damaged cairn_past row is reported as what it is by every command
// that reads the pasts: `diff --round` (on a node that kept no changes of
// its own) does not say the round has no changes kept, and `log --round`
// and `fork --at-round` speak of the table and the round, not of a file
// at an offset to restore. A cairn_past that is gone is a damaged schema,
// not the server's bare error.
func TestDamagedPastRowIsReported(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	flags := exampleAgent(t)
	flags[len(flags)-3] = url
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "d1"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	t.Setenv("TMPDIR", t.TempDir()) // another node: none of the rounds' changes kept here
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if code, out, errOut := cairn(t, "diff", "--store", url, "--round", "4", "d1"); code != exitDone || !strings.Contains(out, "REPORT.md") {
		t.Fatalf("diff of the undamaged round: exit %d: %s%s", code, out, errOut)
	}
	pgExec(t, url, `UPDATE cairn_past SET data = '\xff'::bytea WHERE agent = 'd1' AND round = 4`)
	for _, args := range [][]string{
		{"diff", "--round", "4"},
		{"log", "--round", "4"},
		{"fork", "--at-round", "4", "--as", "d2", "--workspace", t.TempDir() + "/d2"},
	} {
		code, out, errOut := cairn(t, append(append(args[:1:1], "--store", url), append(args[1:], "d1")...)...)
		if code == exitDone || !strings.Contains(errOut, "row round 4 in cairn_past") ||
			strings.Contains(errOut, "no changes kept") || strings.Contains(errOut, "offset") {
			t.Errorf("%s of a damaged past: exit %d: %s%s", args[0], code, out, errOut)
		}
	}
	pgExec(t, url, `DROP TABLE cairn_past`)
	for _, args := range [][]string{{"diff", "--round", "4"}, {"log", "--round", "4"}} {
		code, out, errOut := cairn(t, append(append(args[:1:1], "--store", url), append(args[1:], "d1")...)...)
		if code == exitDone || !strings.Contains(errOut, "schema is damaged") || strings.Contains(errOut, "SQLSTATE") {
			t.Errorf("%s with cairn_past gone: exit %d: %s%s", args[0], code, out, errOut)
		}
	}
}

// pgExec runs a statement on the database at url.
func pgExec(t *testing.T, url, stmt string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	must(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), stmt)
	must(t, err)
}
