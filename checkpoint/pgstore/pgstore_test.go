package pgstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/checkpoint/storetest"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// sharedURL is a new database on the package's shared server.
func sharedURL(t testing.TB) string { return pgtest.Shared(t).NewDatabase(t) }

// open opens a store on url, closed when the test ends.
func open(t testing.TB, url string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	srv := pgtest.Shared(t)
	storetest.Run(t, func(t *testing.T) checkpoint.Store { return open(t, srv.NewDatabase(t)) })
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newState(id string) *checkpoint.State {
	return checkpoint.NewState(id, checkpoint.Definition{Workspace: "/ws"}, checkpoint.Labels{}, t0)
}

// roundRecords are the records of one round with one tool call.
func roundRecords(round int) []checkpoint.Record {
	call := fmt.Sprintf("call_%d", round)
	turn := conversation.Message{Role: conversation.RoleAssistant, Text: fmt.Sprintf("turn %d", round),
		ToolCalls: []conversation.ToolCall{{ID: call, Name: "read_file", Input: `{}`}}}
	return []checkpoint.Record{
		{Type: checkpoint.RecTurn, Time: t0, Round: round, Message: &turn, Usage: &conversation.Usage{InputTokens: 10}},
		{Type: checkpoint.RecPhase, Time: t0, Round: round, Call: call, Tool: "read_file", Phase: checkpoint.PhaseExecuting},
		{Type: checkpoint.RecResult, Time: t0, Round: round, Call: call, Tool: "read_file", Result: &checkpoint.Result{Output: "ok"}},
	}
}

func commitRound(t testing.TB, log checkpoint.Log, round int) {
	t.Helper()
	must(t, log.Append(roundRecords(round)...))
	if _, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: round}); err != nil {
		t.Fatalf("commit round %d: %v", round, err)
	}
}

// committedAgent makes agent id in s and commits its rounds 1 to rounds,
// then lets it go, as a run that ended leaves it.
func committedAgent(t testing.TB, s *pgstore.Store, id string, rounds int) {
	t.Helper()
	lock, err := s.Lock(id, checkpoint.ThisProcess("run-a"))
	must(t, err)
	log, err := s.Create(id, newState(id))
	must(t, err)
	for round := 1; round <= rounds; round++ {
		commitRound(t, log, round)
	}
	must(t, log.Close())
	must(t, lock.Unlock())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sameState(t testing.TB, got, want *checkpoint.State) {
	t.Helper()
	g, _ := checkpoint.EncodeState(got)
	w, _ := checkpoint.EncodeState(want)
	if !bytes.Equal(g, w) {
		t.Fatalf("state differs:\n got %+v\nwant %+v", got, want)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}
