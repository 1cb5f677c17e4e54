package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Commands that only read an agent, or that refuse it, take no lease of
// it: its epoch stays where the last run left it, so a run elsewhere that
// holds it is never fenced by them. gc takes an agent's lease only to
// trim its bookmarks. A fork that is refused leaves no lease of the
// agent it would have made.
func TestRefusedAndReadingCommandsTakeNoLease(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	flags := exampleAgent(t)
	flags[len(flags)-3] = url
	cache := cacheForTests(t)
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "r1"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	before := leaseOf(t, url, "r1")
	for _, args := range [][]string{
		{"show", "r1"}, {"log", "r1"}, {"runs", "r1"}, {"events", "r1"}, {"verify", "--cache", cache, "r1"},
		{"gc", "--dry-run"}, {"gc"},
	} {
		if code, out, errOut := cairn(t, append(args, "--store", url)...); code != exitDone {
			t.Errorf("%s: exit %d: %s%s", args[0], code, out, errOut)
		}
		if after := leaseOf(t, url, "r1"); after != before {
			t.Errorf("%s changed the lease: %+v, was %+v", args[0], after, before)
		}
	}

	for _, args := range [][]string{
		{"--at-round", "99", "--as", "f1", "r1"},
		{"--at-round", "1", "--as", "f2", "--workspace", flags[3], "r1"}, // not empty
		{"--as", "f3", "nobody"},
	} {
		if code, out, errOut := cairn(t, append([]string{"fork", "--store", url}, args...)...); code == exitDone {
			t.Errorf("fork %q: exit %d: %s%s", args, code, out, errOut)
		}
	}
	if n := leaseCount(t, url, "f1", "f2", "f3"); n != 0 {
		t.Errorf("refused forks left %d leases", n)
	}

	pgExec(t, url, `UPDATE cairn_agents SET snapshot = substring(snapshot from 1 for 10) WHERE id = 'r1'`)
	for _, args := range [][]string{{"resume", "--cache", cache, "r1"}, {"verify", "--cache", cache, "r1"}, {"show", "r1"}, {"gc"}} {
		code, out, errOut := cairn(t, append(args, "--store", url)...)
		if code == exitDone || !strings.Contains(errOut, "cairn_agents") {
			t.Errorf("%s of the damaged agent: exit %d: %s%s", args[0], code, out, errOut)
		}
		if after := leaseOf(t, url, "r1"); after != before {
			t.Errorf("%s of the damaged agent changed the lease: %+v, was %+v", args[0], after, before)
		}
	}
}

// leaseCount counts the lease rows of the agents.
func leaseCount(t *testing.T, url string, agents ...string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	must(t, err)
	defer conn.Close(context.Background())
	var n int
	must(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM cairn_leases WHERE agent = ANY($1)`, agents).Scan(&n))
	return n
}
