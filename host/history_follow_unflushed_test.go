package host

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: on PostgreSQL a run's lines wait in memory for its next
// sync or commit, so a follower that began before the run's first
// (`cairn events --follow` while the model is asked its first turn)
// found no history, took the agent for one that never ran, and ended at
// once, giving nothing, though a process ran it. It follows the run as
// long as one runs the agent, and gives every line it writes.
func TestFollowerOfARunNotYetFlushedWaitsForItsLines(t *testing.T) {
	s, err := pgstore.Open(context.Background(), pgtest.Shared(t).NewDatabase(t))
	must(t, err)
	t.Cleanup(s.Close)
	lock, err := s.Lock("a", checkpoint.ThisProcess("r1"))
	must(t, err)
	log, err := s.Create("a", checkpoint.NewState("a", checkpoint.Definition{Workspace: "/ws"}, checkpoint.Labels{}, time.Now()))
	must(t, err)
	// The run's first line waits for its first sync, as the model is asked.
	run := &trimRun{t: t, s: s, lock: lock, log: log, run: "r1"}
	first := `{"type":"run_start","time":"2026-01-02T03:04:05Z","agent":"a","run":"r1"}`
	w, err := s.Events("a")
	must(t, err)
	_, err = io.WriteString(w, first+"\n")
	must(t, err)
	run.lines = append(run.lines, first)

	var got []string
	done := make(chan error, 1)
	go func() {
		done <- ReadHistory(t.Context(), s, "a", true, func(_ Event, line []byte) error {
			got = append(got, string(line))
			return nil
		})
	}()
	select {
	case err := <-done:
		t.Fatalf("the follower ended while the run went on, having given %d lines (%v)", len(got), err)
	case <-time.After(5 * followPoll):
	}
	run.round() // its commit writes what waits
	run.end()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not end")
	}
	must(t, w.Close())
	sameFollow(t, got, run.lines)
}
