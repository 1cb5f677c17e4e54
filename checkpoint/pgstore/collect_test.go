package pgstore_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Collect removes bookmarks past the limit and the blobs no one names,
// leaves what agents and kept bookmarks name, and leaves an agent that a
// process runs alone.
func TestCollect(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	named, err := s.PutBlob([]byte("agent file"))
	must(t, err)
	bookmarked, err := s.PutBlob([]byte("workspace of the newest bookmark"))
	must(t, err)
	dropped, err := s.PutBlob([]byte("workspace of the oldest bookmark"))
	must(t, err)
	unused, err := s.PutBlob([]byte("no one names this"))
	must(t, err)
	runningOnly, err := s.PutBlob([]byte("named by the agent a process runs"))
	must(t, err)

	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	st := newState("a1")
	st.Definition.AgentFile = named
	log, err := s.Create("a1", st)
	must(t, err)
	commitRound(t, log, 1)
	must(t, s.PutBookmark("a1", checkpoint.Bookmark{Label: "old", Time: t0, State: st, Workspace: dropped}))
	must(t, s.PutBookmark("a1", checkpoint.Bookmark{Label: "new", Time: t0.Add(time.Second), State: st, Workspace: bookmarked}))
	must(t, lock.Unlock())
	busy, err := s.Lock("a2", checkpoint.ThisProcess("run-b"))
	must(t, err)
	st2 := newState("a2")
	st2.Definition.AgentFile = runningOnly
	_, err = s.Create("a2", st2)
	must(t, err)

	keep := checkpoint.Retention{Bookmarks: 1, BlobGrace: time.Millisecond}
	time.Sleep(5 * time.Millisecond) // older than the grace, by the database's clock too
	dry, err := s.Collect(checkpoint.Retention{Bookmarks: 1, BlobGrace: time.Millisecond, DryRun: true})
	must(t, err)
	got, err := s.Collect(keep)
	must(t, err)
	want := sorted([]string{"bookmark a1/old", "blob " + dropped, "blob " + unused})
	if g := sorted(got.Files); !slices.Equal(g, want) {
		t.Fatalf("removed %q, want %q", g, want)
	}
	if !slices.Equal(sorted(dry.Files), want) || dry.Bytes != got.Bytes {
		t.Fatalf("the dry run said %v (%d bytes), the run removed %v (%d bytes)", dry.Files, dry.Bytes, got.Files, got.Bytes)
	}
	if len(got.Skipped) != 1 || got.Skipped[0] != "a2" {
		t.Fatalf("skipped %v, want [a2]", got.Skipped)
	}
	for _, d := range []string{named, bookmarked, runningOnly} {
		if _, err := s.Blob(d); err != nil {
			t.Fatalf("blob in use %s: %v", d, err)
		}
	}
	for _, d := range []string{dropped, unused} {
		if _, err := s.Blob(d); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("unused blob %s: %v", d, err)
		}
	}
	bs, err := s.Bookmarks("a1")
	must(t, err)
	if len(bs) != 1 || bs[0].Label != "new" {
		t.Fatalf("bookmarks %+v", bs)
	}
	must(t, busy.Unlock())
}

// Collect keeps the response bodies that the exchanges of an agent's
// state and of its kept bookmarks name, as the file store does.
func TestCollectKeepsExchangeBodies(t *testing.T) {
	s := open(t, sharedURL(t))
	body, err := s.PutBlob([]byte("a response body the agent's state keeps"))
	must(t, err)
	marked, err := s.PutBlob([]byte("a response body a bookmark's state keeps"))
	must(t, err)
	unused, err := s.PutBlob([]byte("a body no exchange names"))
	must(t, err)
	withBody := func(st *checkpoint.State, blob string) *checkpoint.State {
		st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleTool, Text: "fetched",
			Net: []conversation.Exchange{{Seq: 1, Method: "GET", URL: "https://example.com/", Status: 200, Blob: blob}}})
		return st
	}
	lock, err := s.Lock("n1", checkpoint.ThisProcess("run"))
	must(t, err)
	log, err := s.Create("n1", withBody(newState("n1"), body))
	must(t, err)
	must(t, log.Close())
	must(t, s.PutBookmark("n1", checkpoint.Bookmark{Label: "b", Time: t0, State: withBody(newState("n1"), marked)}))
	must(t, lock.Unlock())

	time.Sleep(5 * time.Millisecond) // older than the grace, by the database's clock too
	got, err := s.Collect(checkpoint.Retention{BlobGrace: time.Millisecond})
	must(t, err)
	if !slices.Equal(got.Files, []string{"blob " + unused}) {
		t.Fatalf("removed %q, want only the unnamed blob", got.Files)
	}
	for _, d := range []string{body, marked} {
		if _, err := s.Blob(d); err != nil {
			t.Fatalf("an exchange's body %s: %v", d, err)
		}
	}
}

// A blob younger than the grace stays, and storing one again makes it
// young again.
func TestCollectKeepsFreshBlobs(t *testing.T) {
	s := open(t, sharedURL(t))
	d, err := s.PutBlob([]byte("being created"))
	must(t, err)
	got, err := s.Collect(checkpoint.Retention{BlobGrace: time.Hour})
	must(t, err)
	if len(got.Files) != 0 {
		t.Fatalf("removed %v", got.Files)
	}
	if _, err := s.Blob(d); err != nil {
		t.Fatal(err)
	}
}

// A database of schema version 1, as an older cairn left it, is migrated
// with its agents and blobs kept.
func TestMigrateFromVersion1(t *testing.T) {
	url := sharedURL(t)
	must(t, pgstore.MigrateTo(context.Background(), url, 1))
	execSQL(t, url, `INSERT INTO cairn_blobs (digest, data) VALUES ('sha256:old', 'x')`)
	s := open(t, url)
	var v int
	query(t, url, `SELECT version FROM cairn_schema`, nil, &v)
	if v != pgstore.SchemaVersion() || v < 2 {
		t.Fatalf("version %d after open", v)
	}
	var n int
	query(t, url, `SELECT count(*) FROM cairn_blobs WHERE digest = 'sha256:old' AND stored <= now()`, nil, &n)
	if n != 1 {
		t.Fatal("the old blob did not survive the migration")
	}
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
