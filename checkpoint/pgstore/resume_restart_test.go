package pgstore_test

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a resume that met a restart of the database between taking
// the agent's lease and reading it failed with "database unavailable",
// though the server was back, where a run goes on through a restart: the
// read is sent again on a new connection, as a write is, and the resume
// goes on from the round the agent was at.
func TestResumeReadsThroughRestart(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	committedAgent(t, open(t, url), "a1", 2)

	s := open(t, url)
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lock.Unlock()
	srv.Restart(t)
	rec, log, err := s.Open("a1")
	if err != nil {
		t.Fatalf("resume's read after a restart: %v", err)
	}
	if rec.State.Round != 2 {
		t.Fatalf("resumed at round %d, want 2", rec.State.Round)
	}
	commitRound(t, log, 3)
	d, err := s.PutBlob([]byte("a workspace's file"))
	must(t, err)
	srv.Restart(t)
	if _, err := s.Blob(d); err != nil {
		t.Fatalf("a blob's read after a restart, as a resume fills a workspace: %v", err)
	}
}
