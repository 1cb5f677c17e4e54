package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// pgRoundsAgent runs agent id of 25 rounds of roundsScript in a new
// PostgreSQL database and returns its URL and the agent file.
func pgRoundsAgent(t *testing.T, id string) (url, agentFile string) {
	t.Helper()
	url = pgtest.Shared(t).NewDatabase(t)
	agentFile, _ = scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, roundsScript(25))
	if code, _, errOut := cairnProcess(t, "run", "--store", url, "--cache", cacheForTests(t), "--id", id, "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	return url, agentFile
}

// sql runs statements in the database at url and returns what the first
// column of the last row of the last one holds, as text.
func sql(t *testing.T, url, stmts string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	got, err := conn.PgConn().Exec(ctx, stmts).ReadAll()
	must(t, err)
	if last := got[len(got)-1]; len(last.Rows) > 0 {
		return string(last.Rows[len(last.Rows)-1][0])
	}
	return ""
}

// serveEvents starts `cairn serve` on store and returns a function that
// gets an agent's events from its HTTP API, ?after=N, as lines.
func serveEvents(t *testing.T, store string) func(agent string, after int) []string {
	t.Helper()
	srv := exec.Command(cairnBinary(t), "serve", "--store", store, "--cache", cacheForTests(t), "--addr", "127.0.0.1:0", "--read-only")
	stdout, err := srv.StdoutPipe()
	must(t, err)
	must(t, srv.Start())
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	lines := bufio.NewScanner(stdout)
	base := ""
	for base == "" && lines.Scan() {
		if _, url, ok := strings.Cut(lines.Text(), " on "); ok && strings.HasPrefix(lines.Text(), "cairn serve:") {
			base = url
		}
	}
	go io.Copy(io.Discard, stdout)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("serve printed no address")
	}
	return func(agent string, after int) []string {
		resp, err := http.Get(fmt.Sprintf("%s/api/agents/%s/events?after=%d", base, agent, after))
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("events after=%d: %s %s", after, resp.Status, body)
		}
		return strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	}
}

// `cairn gc --keep-rounds N` on a PostgreSQL store trims an idle agent's
// events and pasts to its last N rounds, as on a file store: the rounds
// kept fork and diff, an older one is refused naming gc and the oldest
// round to fork at, `cairn events` starts with the warning, and the HTTP
// API numbers the lines kept as it did before the trim, so that after=
// still lines up. The agent runs on after it.
func TestGCKeepRoundsTrimsTheRowsOfOldRoundsOnPostgreSQL(t *testing.T) {
	t.Parallel()
	url, agentFile := pgRoundsAgent(t, "kr-pg")
	sql(t, url, `UPDATE cairn_blobs SET stored = now() - interval '2 hours'`)
	events := serveEvents(t, url)
	before := events("kr-pg", 0)

	code, out, errOut := cairnProcess(t, "gc", "--store", url, "--keep-rounds", "12")
	if code != exitDone || !strings.Contains(out, "removed the rounds before 15 from cairn_past/kr-pg") ||
		!strings.Contains(out, "removed the rounds before 15 from cairn_events/kr-pg") || !strings.Contains(out, "removed blob") {
		t.Fatalf("gc: exit %d %s%s", code, out, errOut)
	}
	code, out, errOut = cairnProcess(t, "events", "--store", url, "kr-pg")
	if code != exitDone || !strings.Contains(errOut, "removed the events of the rounds before round 15") || !strings.Contains(out, "round 15 done") ||
		strings.Contains(out, "round 14 done") {
		t.Fatalf("events: exit %d\n%s%s", code, out, errOut)
	}
	// The HTTP API: the warning is line N, N the lines removed, and
	// every line after it has the number it had.
	after := events("kr-pg", 0)
	var removed int
	if _, err := fmt.Sscanf(after[0][strings.Index(after[0], `"removed":`):], `"removed":%d`, &removed); err != nil || removed < 10 {
		t.Fatalf("first line %s: %v", after[0], err)
	}
	for i, line := range after[1:] {
		if n := removed + 1 + i; line != before[n-1] {
			t.Fatalf("line %d after the trim is %q, was %q", n, line, before[n-1])
		}
	}
	if got := events("kr-pg", removed+3); strings.Join(got, "\n") != strings.Join(before[removed+3:], "\n") {
		t.Fatalf("after=%d: %d lines from %q, want %d", removed+3, len(got), got[0], len(before)-removed-3)
	}

	code, _, errOut = cairnProcess(t, "fork", "--store", url, "--at-round", "10", "--as", "f10", "kr-pg")
	if code != exitUsage || !strings.Contains(errOut, "round 10") || !strings.Contains(errOut, "`cairn gc --keep-rounds` removed") ||
		!strings.Contains(errOut, "the oldest round to fork at is 14") {
		t.Fatalf("fork at a removed round: exit %d %s", code, errOut)
	}
	for _, r := range []int{14, 20} {
		ws := filepath.Join(t.TempDir(), "ws")
		if code, _, errOut := cairnProcess(t, "fork", "--store", url, "--at-round", fmt.Sprint(r), "--as", fmt.Sprintf("f%d", r), "--workspace", ws, "kr-pg"); code != exitDone {
			t.Fatalf("fork at round %d: exit %d %s", r, code, errOut)
		}
		wantWorkspaceAt(t, ws, r)
	}
	code, _, errOut = cairnProcess(t, "diff", "--store", url, "--round", "14", "kr-pg")
	if code == exitDone || !strings.Contains(errOut, "`cairn gc --keep-rounds` removed its changes") ||
		!strings.Contains(errOut, "the oldest round whose changes and messages can be seen is 15") {
		t.Fatalf("diff of the oldest past kept: exit %d %s", code, errOut)
	}
	if code, out, errOut := cairnProcess(t, "diff", "--store", url, "--round", "15", "kr-pg"); code != exitDone || !strings.Contains(out, "+round 15") {
		t.Fatalf("diff of round 15: exit %d %s%s", code, out, errOut)
	}

	// The agent runs on, and a second gc trims again.
	if code, _, errOut := cairnProcess(t, "run", "--store", url, "--cache", cacheForTests(t), "--id", "kr-pg", "-f", agentFile, "more"); code != exitDone {
		t.Fatalf("run after gc: exit %d: %s", code, errOut)
	}
	if code, out, errOut := cairnProcess(t, "gc", "--store", url, "--keep-rounds", "2"); code != exitDone || !strings.Contains(out, "before 26 from cairn_events/kr-pg") {
		t.Fatalf("second gc: exit %d %s%s", code, out, errOut)
	}
	if code, out, errOut := cairnProcess(t, "events", "--store", url, "kr-pg"); code != exitDone || !strings.Contains(errOut, "before round 26") ||
		strings.Contains(out, "round 25 done") || !strings.Contains(out, "round 27 done") {
		t.Fatalf("events after a second gc: exit %d\n%s%s", code, out, errOut)
	}
}

// A trim the database refuses (here a trigger refuses to delete an event
// row, after the pasts' rows were deleted in the same transaction) leaves
// the agent's rows as they were: gc names the agent on stderr with what
// to do, exits 1, and the agent forks at its old rounds as before; the
// next gc, once the database lets it, trims.
func TestGCKeepRoundsThatTheDatabaseRefusesLeavesTheRowsOnPostgreSQL(t *testing.T) {
	t.Parallel()
	url, _ := pgRoundsAgent(t, "kr-refused")
	rows := `SELECT md5(string_agg(round::text || encode(data, 'hex'), ',' ORDER BY round)) ||
		(SELECT md5(string_agg(seq::text || encode(data, 'hex'), ',' ORDER BY seq)) FROM cairn_events WHERE agent = 'kr-refused')
		FROM cairn_past WHERE agent = 'kr-refused'`
	before := sql(t, url, rows)
	sql(t, url, `CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by a trigger'; END $$ LANGUAGE plpgsql;
		CREATE TRIGGER refuse BEFORE DELETE ON cairn_events FOR EACH ROW EXECUTE FUNCTION refuse()`)
	code, out, errOut := cairnProcess(t, "gc", "--store", url, "--keep-rounds", "5")
	if code != exitFailed || !strings.Contains(errOut, "could not trim the old rounds of agent kr-refused") ||
		!strings.Contains(errOut, "refused by a trigger") || !strings.Contains(errOut, "its rows are as they were") {
		t.Fatalf("gc: exit %d\n%s%s", code, out, errOut)
	}
	if sql(t, url, rows) != before {
		t.Fatal("the agent's rows changed")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if code, _, errOut := cairnProcess(t, "fork", "--store", url, "--at-round", "3", "--workspace", ws, "kr-refused"); code != exitDone {
		t.Fatalf("fork at round 3: exit %d %s", code, errOut)
	}
	wantWorkspaceAt(t, ws, 3)
	sql(t, url, `DROP TRIGGER refuse ON cairn_events`)
	if code, out, errOut := cairnProcess(t, "gc", "--store", url, "--keep-rounds", "5"); code != exitDone || !strings.Contains(out, "before 22 from cairn_events/kr-refused") {
		t.Fatalf("the next gc: exit %d %s%s", code, out, errOut)
	}
}
