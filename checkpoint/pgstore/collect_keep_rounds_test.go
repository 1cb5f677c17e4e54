package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// roundsAgent makes agent "a" of n committed rounds, as a run keeps its
// pasts and history: round 0's past holds the whole workspace (a.txt),
// each round r writes f<r%3>.txt with "round r", a blob of its own, and
// leaves a run's lines in the history, four rounds a row, as a run's
// syncs write them.
func roundsAgent(t *testing.T, s *pgstore.Store, n int) {
	t.Helper()
	lock, err := s.Lock("a", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a", newState("a"))
	must(t, err)
	a, err := s.PutBlob([]byte("a"))
	must(t, err)
	m, err := checkpoint.EncodeManifest([]checkpoint.WorkspaceEntry{{Path: "a.txt", Size: 1, Mode: 0o644, Digest: a}})
	must(t, err)
	base, err := s.PutBlob(m)
	must(t, err)
	p, err := checkpoint.NewPast(newState("a"), nil)
	must(t, err)
	p.Round, p.Base = 0, base
	must(t, s.PutPast("a", p))
	var events bytes.Buffer
	fmt.Fprintf(&events, `{"type":"run_start","time":"2026-01-01T00:00:00Z","agent":"a","run":"r1"}`+"\n")
	for r := 1; r <= n; r++ {
		commitRound(t, log, r)
		content := fmt.Sprintf("round %d", r)
		d, err := s.PutBlob([]byte(content))
		must(t, err)
		p.Round, p.Base, p.Messages = r, "", 0
		p.Changes = []checkpoint.WorkspaceEntry{{Path: fmt.Sprintf("f%d.txt", r%3), Size: int64(len(content)), Mode: 0o644, Digest: d}}
		must(t, s.PutPast("a", p))
		for _, typ := range []string{"model_turn", "tool_end", "round_end"} {
			fmt.Fprintf(&events, `{"type":%q,"time":"2026-01-01T00:00:00Z","agent":"a","run":"r1","round":%d}`+"\n", typ, r)
		}
		if r%4 == 0 || r == n {
			w, err := s.Events("a")
			must(t, err)
			_, err = w.Write(events.Bytes())
			must(t, err)
			must(t, w.Close())
			events.Reset()
		}
	}
	must(t, log.Close())
}

// workspaces is the workspace at each round of the agent's pasts, as
// names and contents.
func workspaces(t *testing.T, s *pgstore.Store, from, to int) map[int]string {
	t.Helper()
	pasts, err := s.Pasts("a")
	must(t, err)
	out := map[int]string{}
	for r := from; r <= to; r++ {
		m, err := checkpoint.WorkspaceAt(s, pasts, "a", r)
		if err != nil {
			t.Fatalf("workspace at round %d: %v", r, err)
		}
		var b strings.Builder
		for _, e := range m {
			data, err := s.Blob(e.Digest)
			if err != nil {
				t.Fatalf("round %d, %s: %v", r, e.Path, err)
			}
			fmt.Fprintf(&b, "%s=%s ", e.Path, data)
		}
		out[r] = b.String()
	}
	return out
}

// historyLines is the agent's event history, a line each.
func historyLines(t *testing.T, s *pgstore.Store) []string {
	t.Helper()
	rc, err := s.ReadEvents("a")
	must(t, err)
	data, err := io.ReadAll(rc)
	must(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// rowsOf is every row the agent has in cairn_past and cairn_events, and
// its lease's, as text.
func rowsOf(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	var out strings.Builder
	for _, q := range []string{`SELECT round, data, crc FROM cairn_past WHERE agent = 'a' ORDER BY round`,
		`SELECT seq, data, crc FROM cairn_events WHERE agent = 'a' ORDER BY seq`} {
		rows, err := conn.Query(ctx, q)
		must(t, err)
		for rows.Next() {
			var k, crc int64
			var data []byte
			must(t, rows.Scan(&k, &data, &crc))
			fmt.Fprintf(&out, "%d %x %d\n", k, data, crc)
		}
		must(t, rows.Err())
	}
	return out.String()
}

// `cairn gc --keep-rounds` on PostgreSQL keeps the last rounds' pasts,
// each round's workspace as it was, though the round 0 base they were
// rebuilt from is gone; the rounds before are refused, naming gc and the
// oldest round kept; the blobs of the rounds removed go; the history
// starts with a warning that counts every line removed, so that the HTTP
// API numbers the lines kept as before, as the file store's does.
func TestCollectKeepRoundsKeepsTheLastRoundsWholeOnPostgreSQL(t *testing.T) {
	s := open(t, sharedURL(t))
	roundsAgent(t, s, 70)
	want := workspaces(t, s, 30, 70)
	before := historyLines(t, s)

	got, err := s.Collect(checkpoint.Retention{Rounds: 40, BlobGrace: 1})
	must(t, err)
	if len(got.Trimmed) != 2 || got.Trimmed[0].Path != "cairn_past/a" || got.Trimmed[0].Round != 31 || got.Trimmed[0].Bytes <= 0 ||
		got.Trimmed[1].Path != "cairn_events/a" || got.Trimmed[1].Bytes <= 0 || len(got.Untrimmed)+len(got.Unreadable)+len(got.Skipped) != 0 {
		t.Fatalf("collected %+v", got)
	}
	pasts, err := s.Pasts("a")
	must(t, err)
	if pasts[0].Round != 30 || !pasts[0].Trimmed || pasts[0].Base == "" || len(pasts) != 41 {
		t.Fatalf("pasts from round %d (trimmed %v, base %q), %d of them", pasts[0].Round, pasts[0].Trimmed, pasts[0].Base, len(pasts))
	}
	if after := workspaces(t, s, 30, 70); fmt.Sprint(after) != fmt.Sprint(want) {
		t.Fatalf("workspaces after the trim:\n%v\nwant\n%v", after, want)
	}
	_, err = checkpoint.PastAt(pasts, "a", 12)
	if !errors.Is(err, checkpoint.ErrNoPast) || !strings.Contains(err.Error(), "round 12") ||
		!strings.Contains(err.Error(), "`cairn gc --keep-rounds` removed the pasts of the rounds before 30") ||
		!strings.Contains(err.Error(), "the oldest round to fork at is 30") {
		t.Fatalf("past of round 12: %v", err)
	}
	if _, err := s.Blob(checkpoint.BlobDigest([]byte("round 2"))); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("blob of round 2: %v", err)
	}
	if _, err := s.Blob(checkpoint.BlobDigest([]byte("round 29"))); err != nil {
		t.Fatalf("blob of round 29, in round 30's workspace: %v", err)
	}
	if p, ok, err := s.NewestPast("a"); err != nil || !ok || p.Round != 70 {
		t.Fatalf("newest past: round %d, %v, %v", p.Round, ok, err)
	}
	lines := historyLines(t, s)
	var first checkpoint.TrimmedEvents
	must(t, json.Unmarshal([]byte(lines[0]), &first))
	if first.Type != "warning" || first.Run != "" || first.Round != 31 || first.Removed != 1+30*3 ||
		!strings.Contains(first.Text, "before round 31") || len(lines) != 1+40*3 || !strings.Contains(lines[1], `"round":31`) {
		t.Fatalf("history starts %q, %d lines", lines[:2], len(lines))
	}
	// Each line kept is numbered as before: the warning stands for the
	// lines removed.
	for i, line := range lines[1:] {
		if n := int(first.Removed) + 1 + i; before[n-1] != line {
			t.Fatalf("line %d is %q, was %q", n, line, before[n-1])
		}
	}
	// Reading on from a byte of the history: the rows from there.
	rc, err := s.ReadEventsFrom("a", int64(len(lines[0])+1))
	must(t, err)
	rest, _ := io.ReadAll(rc)
	if string(rest) != strings.Join(lines[1:], "\n")+"\n" {
		t.Fatalf("read from after the warning: %.200q", rest)
	}

	// Again, with fewer: the warning counts every line removed.
	got, err = s.Collect(checkpoint.Retention{Rounds: 10, BlobGrace: 1})
	must(t, err)
	lines = historyLines(t, s)
	must(t, json.Unmarshal([]byte(lines[0]), &first))
	if first.Removed != 1+60*3 || len(lines) != 1+10*3 || len(got.Trimmed) != 2 {
		t.Fatalf("after a second trim: removed %d, %d lines, trimmed %+v", first.Removed, len(lines), got.Trimmed)
	}
	if after := workspaces(t, s, 60, 70); fmt.Sprint(after) != fmt.Sprint(map[int]string{60: want[60], 61: want[61], 62: want[62],
		63: want[63], 64: want[64], 65: want[65], 66: want[66], 67: want[67], 68: want[68], 69: want[69], 70: want[70]}) {
		t.Fatalf("workspaces after a second trim: %v", after)
	}
	// Nothing more to trim: nothing is written.
	if got, err = s.Collect(checkpoint.Retention{Rounds: 10}); err != nil || len(got.Trimmed) != 0 {
		t.Fatalf("a third gc: %+v, %v", got, err)
	}
	// The agent runs on from where it was.
	lock, err := s.Lock("a", checkpoint.ThisProcess("run-b"))
	must(t, err)
	rec, log, err := s.Open("a")
	must(t, err)
	if rec.State.Round != 70 {
		t.Fatalf("round %d after the trims", rec.State.Round)
	}
	commitRound(t, log, 71)
	must(t, log.Close())
	must(t, lock.Unlock())
}

// A dry run says what it would trim and writes nothing; an agent a
// process runs is skipped, its rows as they were, its lease its holder's.
func TestCollectKeepRoundsDryRunAndARunningAgentWriteNothingOnPostgreSQL(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	roundsAgent(t, s, 20)
	before := rowsOf(t, url)
	got, err := s.Collect(checkpoint.Retention{Rounds: 5, DryRun: true, BlobGrace: 1})
	must(t, err)
	if len(got.Trimmed) != 2 || got.Bytes == 0 || got.Trimmed[0].Round != 16 {
		t.Fatalf("dry run: %+v", got)
	}
	if rowsOf(t, url) != before {
		t.Fatal("a dry run changed the agent's rows")
	}
	if _, err := s.Blob(checkpoint.BlobDigest([]byte("round 2"))); err != nil {
		t.Fatalf("a dry run removed a blob: %v", err)
	}

	runner := open(t, url)
	lock, err := runner.Lock("a", checkpoint.ThisProcess("run-c"))
	must(t, err)
	defer lock.Unlock()
	got, err = s.Collect(checkpoint.Retention{Rounds: 5, BlobGrace: 1})
	must(t, err)
	if len(got.Trimmed) != 0 || len(got.Skipped) != 1 || got.Skipped[0] != "a" {
		t.Fatalf("collect of a running agent: %+v", got)
	}
	if rowsOf(t, url) != before {
		t.Fatal("gc trimmed the rows of an agent a process runs")
	}
	if _, err := s.Blob(checkpoint.BlobDigest([]byte("round 2"))); err != nil {
		t.Fatalf("gc removed a blob of an agent a process runs: %v", err)
	}
}

// A trim whose transaction fails, or whose connection is cut, between
// its pasts' statements and its history's, changes nothing of the agent:
// it is named in Untrimmed, every round still forks as before and every
// blob its pasts name is kept; the next gc trims it.
func TestKeepRoundsInterruptedLeavesTheAgentIntactOnPostgreSQL(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url, pgstore.WithTimeout(2*time.Second))
	roundsAgent(t, s, 30)
	want := workspaces(t, s, 0, 30)
	before := rowsOf(t, url)
	for _, stmt := range []string{`SELECT 1/0`, `SELECT pg_terminate_backend(pg_backend_pid())`} {
		pgstore.OnTrim(t, func(b *pgx.Batch) { b.Queue(stmt) })
		got, err := s.Collect(checkpoint.Retention{Rounds: 10, BlobGrace: 1})
		if err != nil && !errors.Is(err, pgstore.ErrUnavailable) {
			t.Fatalf("%s: %v", stmt, err)
		}
		if got == nil || len(got.Untrimmed) != 1 || got.Untrimmed[0].Agent != "a" || len(got.Trimmed) != 0 {
			t.Fatalf("%s: collected %+v (%v)", stmt, got, err)
		}
		if rowsOf(t, url) != before {
			t.Fatalf("%s: the agent's rows changed", stmt)
		}
		if after := workspaces(t, s, 0, 30); fmt.Sprint(after) != fmt.Sprint(want) {
			t.Fatalf("%s: workspaces after:\n%v\nwant\n%v", stmt, after, want)
		}
	}
	pgstore.OnTrim(t, nil)
	got, err := s.Collect(checkpoint.Retention{Rounds: 10, BlobGrace: 1})
	if err != nil || len(got.Trimmed) != 2 || len(got.Untrimmed) != 0 {
		t.Fatalf("the next gc: %+v, %v", got, err)
	}
	if lines := historyLines(t, s); len(lines) != 1+10*3 {
		t.Fatalf("%d lines after the next gc", len(lines))
	}
}
