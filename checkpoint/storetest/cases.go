package storetest

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// What was committed reads back as the log has it; the round left open is
// the tail.
func testRoundTrip(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 3)
	must(t, a.log.Append(roundRecords(4, 0)[:2]...))
	must(t, a.log.Sync())
	want := a.log.State()
	a.release()
	rec, err := s.Read("a1")
	must(t, err)
	sameState(t, "read after three rounds", rec.State, want)
	st := rec.State
	if st.Round != 3 || st.ToolCalls != 3 || st.Usage.InputTokens != 30 || st.TaskRounds != 3 || len(st.Messages) != 7 {
		t.Fatalf("state: round %d, calls %d, usage %+v, task rounds %d, %d messages",
			st.Round, st.ToolCalls, st.Usage, st.TaskRounds, len(st.Messages))
	}
	if st.Messages[6].Text != "out 3" || st.Labels.Tenant != "t1" || st.Status != checkpoint.StatusRunning || !st.UpdatedAt.Equal(t0) {
		t.Fatalf("state: %+v", st)
	}
	if len(rec.Tail) != 2 || rec.Tail[1].Phase != checkpoint.PhaseExecuting || !rec.Interrupted() {
		t.Fatalf("tail: %+v", rec.Tail)
	}
	if !s.Exists("a1") {
		t.Fatal("Exists says no")
	}
}

// Open recovers the agent with its tail, and its log goes on from there.
func testReopenContinues(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 2)
	must(t, a.log.Append(roundRecords(3, 0)[:1]...))
	must(t, a.log.Sync())
	a.release()
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-2"))
	must(t, err)
	defer lock.Unlock()
	rec, log, err := s.Open("a1")
	must(t, err)
	if rec.State.Round != 2 || len(rec.Tail) != 1 {
		t.Fatalf("open: round %d, tail %d", rec.State.Round, len(rec.Tail))
	}
	must(t, log.Append(roundRecords(3, 0)[1:]...))
	if _, err := log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 3}); err != nil {
		t.Fatal(err)
	}
	commitRound(t, log, 4, 0)
	want := log.State()
	must(t, log.Close())
	got, err := s.Read("a1")
	must(t, err)
	sameState(t, "after reopening", got.State, want)
	if got.State.Round != 4 || got.State.ToolCalls != 4 || len(got.Tail) != 0 {
		t.Fatalf("round %d, %d calls, tail %d", got.State.Round, got.State.ToolCalls, len(got.Tail))
	}
}

// An Abort drops the round's records; the next round commits in its place.
func testAbort(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 1)
	must(t, a.log.Append(roundRecords(2, 0)...))
	_, err := a.log.Commit(checkpoint.Record{Type: checkpoint.RecAbort, Time: t0, Round: 2, Reason: "replay"})
	must(t, err)
	commitRound(t, a.log, 2, 0)
	a.release()
	rec, err := s.Read("a1")
	must(t, err)
	if rec.State.Round != 2 || len(rec.Tail) != 0 || rec.State.ToolCalls != 2 {
		t.Fatalf("round %d tail %d calls %d", rec.State.Round, len(rec.Tail), rec.State.ToolCalls)
	}
}

// A Commit ends with a Commit or Abort record: one that ends otherwise,
// or has no record, is refused and writes nothing.
func testCommitType(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 1)
	if _, err := a.log.Commit(checkpoint.Record{Type: checkpoint.RecUser, Message: &conversation.Message{}}); err == nil {
		t.Fatal("Commit took a user record")
	}
	commit := checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2}
	if _, err := a.log.Commit(commit, roundRecords(2, 0)[0]); err == nil {
		t.Fatal("Commit took records after its commit")
	}
	if _, err := a.log.Commit(); err == nil {
		t.Fatal("Commit took no record")
	}
	a.release()
	if rec, err := s.Read("a1"); err != nil || rec.State.Round != 1 || len(rec.Tail) != 0 {
		t.Fatalf("after the refused commits: %+v, %v", rec, err)
	}
}

// The records a Commit is given before its commit record are the round's,
// written and made durable with it.
func testCommitWithRecords(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 1)
	recs := roundRecords(2, 0)
	must(t, a.log.Append(recs[0]))
	n, err := a.log.Commit(append(recs[1:], checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2})...)
	must(t, err)
	if _, mem := s.(*checkpoint.MemStore); n <= 0 && !mem {
		t.Fatalf("the round's bytes: %d", n)
	}
	want := a.log.State()
	a.release()
	rec, err := s.Read("a1")
	must(t, err)
	sameState(t, "read after the commit", rec.State, want)
	if rec.State.Round != 2 || rec.State.ToolCalls != 2 || len(rec.Tail) != 0 || rec.State.Messages[len(rec.State.Messages)-1].Text != "out 2" {
		t.Fatalf("round %d, %d calls, tail %d", rec.State.Round, rec.State.ToolCalls, len(rec.Tail))
	}
}

func testCreateTwice(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 1)
	_, err := s.Create("a1", checkpoint.NewState("a1", checkpoint.Definition{}, checkpoint.Labels{}, t0))
	wantErr(t, "second Create", err, checkpoint.ErrExists)
	a.release()
	if rec, err := s.Read("a1"); err != nil || rec.State.Round != 1 {
		t.Fatalf("after the refused Create: %v", err)
	}
}

func testNotFound(t *testing.T, s checkpoint.Store) {
	if s.Exists("nobody") {
		t.Fatal("Exists of an unknown agent")
	}
	_, err := s.Read("nobody")
	wantErr(t, "Read", err, checkpoint.ErrNotFound)
	_, err = s.Summary("nobody")
	wantErr(t, "Summary", err, checkpoint.ErrNotFound)
	_, err = s.ReadEvents("nobody")
	wantErr(t, "ReadEvents", err, checkpoint.ErrNotFound)
	_, err = s.Bookmarks("nobody")
	wantErr(t, "Bookmarks", err, checkpoint.ErrNotFound)
	wantErr(t, "PutBookmark", s.PutBookmark("nobody", checkpoint.Bookmark{Label: "x", State: &checkpoint.State{}}), checkpoint.ErrNotFound)
	lock, err := s.Lock("nobody", checkpoint.ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	_, _, err = s.Open("nobody")
	wantErr(t, "Open", err, checkpoint.ErrNotFound)
}

// A second Lock of a held agent fails with ErrLocked until it is released.
func testLockExclusive(t *testing.T, s checkpoint.Store) {
	first, err := s.Lock("a1", checkpoint.ThisProcess("run-1"))
	must(t, err)
	_, err = s.Lock("a1", checkpoint.ThisProcess("run-2"))
	wantErr(t, "second Lock", err, checkpoint.ErrLocked)
	if le, ok := err.(*checkpoint.LockedError); !ok || le.Agent != "a1" {
		t.Fatalf("second Lock: %T %v, want a *LockedError of a1", err, err)
	} else if le.Holder.PID != 0 && le.Holder.Run != "run-1" {
		t.Fatalf("the error names run %q, want run-1", le.Holder.Run)
	}
	other, err := s.Lock("a2", checkpoint.ThisProcess("run-3"))
	must(t, err)
	must(t, other.Unlock())
	must(t, first.Unlock())
	again, err := s.Lock("a1", checkpoint.ThisProcess("run-2"))
	must(t, err)
	must(t, again.Unlock())
}

func testBadID(t *testing.T, s checkpoint.Store) {
	for _, id := range []string{"", "..", ".hidden", "a/b", "../../etc", string(make([]byte, 200))} {
		if l, err := s.Lock(id, checkpoint.ThisProcess("r")); err == nil {
			l.Unlock()
			t.Errorf("id %q was accepted", id)
		}
	}
}

// Remove forgets the state; the id may be created again.
func testRemove(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 2)
	must(t, a.log.Close())
	a.log = nil
	must(t, s.Remove("a1"))
	if s.Exists("a1") {
		t.Fatal("Exists after Remove")
	}
	_, err := s.Read("a1")
	wantErr(t, "Read after Remove", err, checkpoint.ErrNotFound)
	log, err := s.Create("a1", checkpoint.NewState("a1", checkpoint.Definition{}, checkpoint.Labels{}, t0))
	must(t, err)
	must(t, log.Close())
	if rec, err := s.Read("a1"); err != nil || rec.State.Round != 0 {
		t.Fatalf("after re-creating: %v", err)
	}
}

func testList(t *testing.T, s checkpoint.Store) {
	create(t, s, "b", 2).release()
	a := create(t, s, "a", 1)
	must(t, a.log.Append(checkpoint.Record{Type: checkpoint.RecRunEnded, Time: t0,
		Run: &checkpoint.RunInfo{ID: "run-1", Status: checkpoint.StatusDone}}))
	must(t, a.log.Sync())
	a.release()
	lock, err := s.Lock("b", checkpoint.ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	list, err := s.List()
	must(t, err)
	if len(list) != 2 || list[0].ID != "a" || list[0].Status != checkpoint.StatusDone || list[0].Interrupted || list[0].Locked ||
		list[1].Round != 2 || !list[1].Interrupted || !list[1].Locked {
		t.Fatalf("list: %+v", list)
	}
	one, err := s.Summary("b")
	must(t, err)
	if one.ID != "b" || one.Round != 2 || !one.Locked || one.ToolCalls != 2 {
		t.Fatalf("summary of b: %+v", one)
	}
}

// The event history reads back as written, across writers.
func testEvents(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 0)
	for i, lines := range []string{"{\"n\":1}\n{\"n\":2}\n", "{\"n\":3}\n"} {
		w, err := s.Events("a1")
		must(t, err)
		_, err = io.WriteString(w, lines)
		must(t, err)
		if i == 0 {
			commitRound(t, a.log, 1, 0) // what is written may go with a commit
		}
		must(t, w.Close())
	}
	a.release()
	r, err := s.ReadEvents("a1")
	must(t, err)
	if got := readAll(t, r); got != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" {
		t.Fatalf("events: %q", got)
	}
}

// DropEvents removes the history, what waits to be written of it too, so
// that the next writer starts it anew; an agent without one is no error.
func testDropEvents(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 0)
	defer a.release()
	must(t, s.DropEvents("a1"))
	for _, lines := range []string{"{\"n\":1}\n", "{\"n\":2}\n"} {
		w, err := s.Events("a1")
		must(t, err)
		_, err = io.WriteString(w, lines)
		must(t, err)
		must(t, w.Close())
	}
	must(t, s.DropEvents("a1"))
	_, err := s.ReadEvents("a1")
	wantErr(t, "ReadEvents after DropEvents", err, checkpoint.ErrNotFound)
	w, err := s.Events("a1")
	must(t, err)
	_, err = io.WriteString(w, "{\"n\":3}\n")
	must(t, err)
	must(t, w.Close())
	r, err := s.ReadEvents("a1")
	must(t, err)
	if got := readAll(t, r); got != "{\"n\":3}\n" {
		t.Fatalf("events after DropEvents and a write: %q", got)
	}
}

// Bookmarks replace by label, list oldest first and keep their state.
func testBookmarks(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 2)
	st := a.log.State()
	put := func(label string, at time.Time, round int) {
		t.Helper()
		must(t, s.PutBookmark("a1", checkpoint.Bookmark{Label: label, Round: round, Time: at, State: st, Workspace: "sha256:ws"}))
	}
	put("second", t0.Add(2*time.Second), 1)
	put("first", t0.Add(time.Second), 1)
	put("second", t0.Add(3*time.Second), 2) // replaces
	if err := s.PutBookmark("a1", checkpoint.Bookmark{Label: "../x", State: st}); err == nil {
		t.Fatal("a label that is no name was taken")
	}
	bs, err := s.Bookmarks("a1")
	must(t, err)
	if len(bs) != 2 || bs[0].Label != "first" || bs[1].Label != "second" || bs[1].Round != 2 ||
		!bs[1].Time.Equal(t0.Add(3*time.Second)) || bs[1].Workspace != "sha256:ws" {
		t.Fatalf("bookmarks: %+v", bs)
	}
	sameState(t, "bookmark's state", bs[1].State, st)
}

func testBlobs(t *testing.T, s checkpoint.Store) {
	d, err := s.PutBlob([]byte("module bytes"))
	must(t, err)
	if d != checkpoint.BlobDigest([]byte("module bytes")) {
		t.Fatalf("digest %s", d)
	}
	if d2, err := s.PutBlob([]byte("module bytes")); err != nil || d2 != d {
		t.Fatalf("the same bytes again: %s, %v", d2, err)
	}
	b, err := s.Blob(d)
	if err != nil || string(b) != "module bytes" {
		t.Fatalf("%q %v", b, err)
	}
	empty, err := s.PutBlob(nil)
	must(t, err)
	if b, err := s.Blob(empty); err != nil || len(b) != 0 {
		t.Fatalf("empty blob: %q %v", b, err)
	}
	_, err = s.Blob("sha256:" + fmt.Sprintf("%064d", 0))
	wantErr(t, "unknown blob", err, checkpoint.ErrNotFound)
}

// Enough rounds, large enough, to make a store compact its journal: the
// state survives it, and the agent goes on from there.
func testManyRounds(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 0)
	for r := 1; r <= 60; r++ {
		commitRound(t, a.log, r, 200)
	}
	want := a.log.State()
	a.release()
	rec, err := s.Read("a1")
	must(t, err)
	sameState(t, "after 60 rounds", rec.State, want)
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-2"))
	must(t, err)
	defer lock.Unlock()
	_, log, err := s.Open("a1")
	must(t, err)
	commitRound(t, log, 61, 0)
	must(t, log.Close())
	if rec, err := s.Read("a1"); err != nil || rec.State.Round != 61 || rec.State.ToolCalls != 61 {
		t.Fatalf("after reopening: %+v, %v", rec, err)
	}
}

// A store that is a checkpoint.Checker finds readable what Read reads —
// an agent whose journal was compacted, with a round in progress — and
// an unknown agent not found.
func testCheck(t *testing.T, s checkpoint.Store) {
	c, ok := s.(checkpoint.Checker)
	if !ok {
		t.Skip("the store is no checkpoint.Checker")
	}
	a := create(t, s, "a1", 0)
	for r := 1; r <= 60; r++ {
		commitRound(t, a.log, r, 200)
	}
	must(t, a.log.Append(roundRecords(61, 0)...))
	must(t, a.log.Sync())
	if _, err := s.Read("a1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Check("a1"); err != nil {
		t.Fatalf("Check of an agent Read reads: %v", err)
	}
	wantErr(t, "Check of an unknown agent", c.Check("nobody"), checkpoint.ErrNotFound)
}
