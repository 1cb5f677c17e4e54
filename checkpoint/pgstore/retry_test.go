package pgstore_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// storeWrite is one of the writes a store makes outside an agent's log.
type storeWrite struct {
	name string
	do   func() error
}

// writesOutsideTheLog are the store's writes that are not a log's: a
// blob (a call's file), event history, a bookmark, a pause request and
// its clearing, a memory fact and its removal, a workflow record, and the
// lease's release and take. They run in this order, each after the one
// before it has succeeded.
func writesOutsideTheLog(t *testing.T, s *pgstore.Store, agent string) []storeWrite {
	lock, err := s.Lock(agent, checkpoint.ThisProcess("run-a"))
	must(t, err)
	t.Cleanup(func() { lock.Unlock() })
	log, err := s.Create(agent, newState(agent))
	must(t, err)
	commitRound(t, log, 1)
	fact := checkpoint.Fact{Key: "k", Text: "a fact", Time: t0}
	wf := &checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "wf-" + agent, Started: t0, Updated: t0}
	return []storeWrite{
		{"blob", func() error { _, err := s.PutBlob([]byte("line 4\n")); return err }},
		{"events", func() error {
			w, err := s.Events(agent)
			if err != nil {
				return err
			}
			w.Write([]byte("{\"type\":\"note\"}\n"))
			return w.Close()
		}},
		{"bookmark", func() error {
			return s.PutBookmark(agent, checkpoint.Bookmark{Label: "b1", Round: 1, Time: t0, State: log.State()})
		}},
		{"pause", func() error { return s.RequestPause(agent) }},
		{"clear pause", func() error { return s.ClearPause(agent) }},
		{"remember", func() error { return s.Remember("team", fact) }},
		{"forget", func() error { return s.Forget("team", "k") }},
		{"workflow", func() error { return s.PutWorkflow(wf) }},
		{"release", lock.Unlock},
		{"take", func() error {
			l, err := s.Lock(agent, checkpoint.ThisProcess("run-b"))
			if err == nil {
				lock = l
			}
			return err
		}},
	}
}

// D2: a PostgreSQL restart while a call writes a file (or the store
// makes any other write outside an agent's log) pauses the write, which
// goes on once the server is back, as a log's writes do. Before, the
// first such write failed the run with "database unavailable". The
// server restarts under a write of each kind of retry (an upsert, an
// append, a release, a take); the next test sends every write on
// terminated connections.
func TestRestartDuringWritesOutsideTheLog(t *testing.T) {
	srv := pgtest.Start(t)
	s := open(t, srv.NewDatabase(t))
	restartUnder := map[string]bool{"blob": true, "events": true, "release": true, "take": true}
	for _, w := range writesOutsideTheLog(t, s, "a1") {
		if !restartUnder[w.name] {
			must(t, w.do())
			continue
		}
		srv.Stop(t)
		done := make(chan error, 1)
		go func() { done <- w.do() }()
		time.Sleep(300 * time.Millisecond)
		srv.Start(t)
		if err := <-done; err != nil {
			t.Errorf("%s while the server restarted: %v", w.name, err)
		}
	}
	checkWritesLanded(t, s, "a1")
}

// D2, with the server's notice of a fast shutdown (SQLSTATE 57P01) on
// connections the pool holds: each write is sent again on a new one.
func TestTerminatedConnectionsDuringWritesOutsideTheLog(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	for _, w := range writesOutsideTheLog(t, s, "a1") {
		terminateBackends(t, url)
		if err := w.do(); err != nil {
			t.Errorf("%s after its connections were terminated: %v", w.name, err)
		}
	}
	checkWritesLanded(t, s, "a1")
}

// checkWritesLanded checks that each of writesOutsideTheLog was made
// once.
func checkWritesLanded(t *testing.T, s *pgstore.Store, agent string) {
	t.Helper()
	if b, err := s.Blob(checkpoint.BlobDigest([]byte("line 4\n"))); err != nil || string(b) != "line 4\n" {
		t.Errorf("blob: %q, %v", b, err)
	}
	if r, err := s.ReadEvents(agent); err != nil {
		t.Errorf("events: %v", err)
	} else if b, _ := io.ReadAll(r); string(b) != "{\"type\":\"note\"}\n" {
		t.Errorf("events: %q", b)
	}
	if marks, err := s.Bookmarks(agent); err != nil || len(marks) != 1 {
		t.Errorf("bookmarks: %d, %v", len(marks), err)
	}
	if p, err := s.PauseRequested(agent); err != nil || p {
		t.Errorf("pause requested: %v, %v", p, err)
	}
	if facts, err := s.Recall("team"); err != nil || len(facts) != 0 {
		t.Errorf("memory: %v, %v", facts, err)
	}
	if _, err := s.Workflow("wf-" + agent); err != nil {
		t.Errorf("workflow: %v", err)
	}
	if _, err := s.Lock(agent, checkpoint.ThisProcess("run-c")); err == nil {
		t.Errorf("the lease taken again is not held")
	}
}

// terminateBackends ends every other connection to the database at url,
// as a fast shutdown does, and waits for them to end.
func terminateBackends(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	must(t, err)
}
