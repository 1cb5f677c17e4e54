// Package storetest is the conformance suite of checkpoint.Store: what
// every implementation must do, run against the file store, the memory
// store and the PostgreSQL store, and open to a user's own Store.
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) checkpoint.Store { return openMyStore(t) })
//	}
//
// Each test gets a new, empty store from open. The suite takes an agent's
// lock before it creates, opens or removes the agent, as the host does.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// Run runs the suite, each test a subtest with a store of its own.
func Run(t *testing.T, open func(t *testing.T) checkpoint.Store) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, checkpoint.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"ReopenContinues", testReopenContinues},
		{"AbortDropsTheRound", testAbort},
		{"CommitNeedsCommitOrAbort", testCommitType},
		{"CommitWithTheRoundsRecords", testCommitWithRecords},
		{"CreateTwiceIsErrExists", testCreateTwice},
		{"UnknownAgentIsErrNotFound", testNotFound},
		{"LockIsExclusive", testLockExclusive},
		{"BadIDRefused", testBadID},
		{"RemoveForgetsState", testRemove},
		{"ListAndSummary", testList},
		{"Events", testEvents},
		{"DropEvents", testDropEvents},
		{"Bookmarks", testBookmarks},
		{"Blobs", testBlobs},
		{"ManyRoundsCompact", testManyRounds},
		{"PauseRequests", testPause},
		{"Workflows", testWorkflows},
		{"Memory", testMemory},
		{"CompactionRecords", testCompaction},
		{"Timeline", testTimeline},
		{"CheckAgreesWithRead", testCheck},
		{"TrimKeepsLineNumbers", testTrimKeepsLineNumbers},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

// roundRecords are the records of one round with one tool call; pad
// makes the turn's text that many bytes longer.
func roundRecords(round, pad int) []checkpoint.Record {
	call := fmt.Sprintf("call_%d_0", round)
	turn := conversation.Message{Role: conversation.RoleAssistant, Text: fmt.Sprintf("turn %d", round) + strings.Repeat(".", pad),
		ToolCalls: []conversation.ToolCall{{ID: call, Name: "read_file", Input: `{"path":"a"}`}}}
	return []checkpoint.Record{
		{Type: checkpoint.RecTurn, Time: t0, Round: round, Message: &turn, Usage: &conversation.Usage{InputTokens: 10, OutputTokens: 2}},
		{Type: checkpoint.RecPhase, Time: t0, Round: round, Call: call, Tool: "read_file", Phase: checkpoint.PhaseExecuting},
		{Type: checkpoint.RecResult, Time: t0, Round: round, Call: call, Tool: "read_file",
			Result: &checkpoint.Result{Output: fmt.Sprintf("out %d", round), Effects: []byte{0xa0}}},
	}
}

// agent is a created agent whose lock the test holds.
type agent struct {
	id   string
	lock checkpoint.Lock
	log  checkpoint.Log
}

// create locks and creates an agent with a run started and n rounds
// committed. The lock is released when the test ends, unless released
// before.
func create(t *testing.T, s checkpoint.Store, id string, n int) *agent {
	t.Helper()
	lock, err := s.Lock(id, checkpoint.ThisProcess("run-1"))
	must(t, err)
	a := &agent{id: id, lock: lock}
	t.Cleanup(func() { a.release() })
	a.log, err = s.Create(id, checkpoint.NewState(id, checkpoint.Definition{Workspace: "/ws"}, checkpoint.Labels{Tenant: "t1"}, t0))
	must(t, err)
	must(t, a.log.Append(checkpoint.Record{Type: checkpoint.RecRunStarted, Time: t0, Run: &checkpoint.RunInfo{ID: "run-1", Started: t0}},
		checkpoint.Record{Type: checkpoint.RecUser, Time: t0, Message: &conversation.Message{Role: conversation.RoleUser, Text: "hello"}}))
	for r := 1; r <= n; r++ {
		commitRound(t, a.log, r, 0)
	}
	return a
}

// release closes the agent's log and releases its lock, once.
func (a *agent) release() {
	if a.log != nil {
		a.log.Close()
		a.log = nil
	}
	if a.lock != nil {
		a.lock.Unlock()
		a.lock = nil
	}
}

func commitRound(t *testing.T, log checkpoint.Log, round, pad int) {
	t.Helper()
	must(t, log.Append(roundRecords(round, pad)...))
	if _, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: round}); err != nil {
		t.Fatalf("commit round %d: %v", round, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sameState fails unless two states encode to the same bytes.
func sameState(t *testing.T, what string, got, want *checkpoint.State) {
	t.Helper()
	g, err := checkpoint.EncodeState(got)
	must(t, err)
	w, err := checkpoint.EncodeState(want)
	must(t, err)
	if !bytes.Equal(g, w) {
		t.Fatalf("%s: state differs:\n got %+v\nwant %+v", what, got, want)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got %v, want %v", what, err, target)
	}
}

func readAll(t *testing.T, r io.ReadCloser) string {
	t.Helper()
	defer r.Close()
	b, err := io.ReadAll(r)
	must(t, err)
	return string(b)
}
