package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)

// roundRecords are the records of one round with one tool call.
func roundRecords(round int) []Record {
	call := fmt.Sprintf("call_%d_0", round)
	turn := conversation.Message{Role: conversation.RoleAssistant, Text: fmt.Sprintf("turn %d", round),
		ToolCalls: []conversation.ToolCall{{ID: call, Name: "read_file", Input: `{"path":"a"}`}}}
	return []Record{
		{Type: RecTurn, Time: t0, Round: round, Message: &turn, Usage: &conversation.Usage{InputTokens: 10, OutputTokens: 2}},
		{Type: RecPhase, Time: t0, Round: round, Call: call, Tool: "read_file", Phase: PhaseExecuting},
		{Type: RecResult, Time: t0, Round: round, Call: call, Tool: "read_file", Result: &Result{Output: fmt.Sprintf("out %d", round)}},
	}
}

// newAgent creates an agent in s with a run started and n rounds committed.
func newAgent(t testing.TB, s Store, id string, n int) Log {
	t.Helper()
	lock, err := s.Lock(id, ThisProcess("run-1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Unlock() })
	log, err := s.Create(id, NewState(id, Definition{Workspace: "/ws"}, Labels{Tenant: "t1"}, t0))
	if err != nil {
		t.Fatal(err)
	}
	must(t, log.Append(Record{Type: RecRunStarted, Time: t0, Run: &RunInfo{ID: "run-1", Started: t0}},
		Record{Type: RecUser, Time: t0, Message: &conversation.Message{Role: conversation.RoleUser, Text: "hello"}}))
	for r := 1; r <= n; r++ {
		commitRound(t, log, r)
	}
	return unlockOnClose{log, lock}
}

// unlockOnClose releases the agent's lock when its log is closed.
type unlockOnClose struct {
	Log
	lock Lock
}

func (u unlockOnClose) Close() error { u.lock.Unlock(); return u.Log.Close() }

func commitRound(t testing.TB, log Log, round int) {
	t.Helper()
	must(t, log.Append(roundRecords(round)...))
	if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: round}); err != nil {
		t.Fatal(err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func stores(t *testing.T) map[string]Store {
	fs, err := OpenFileStore(t.TempDir())
	must(t, err)
	return map[string]Store{"file": fs, "mem": NewMemStore()}
}

func TestRoundTrip(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			log := newAgent(t, s, "a1", 3)
			must(t, log.Append(roundRecords(4)[:2]...)) // round 4 interrupted mid-call
			log.Close()
			rec, err := s.Read("a1")
			must(t, err)
			st := rec.State
			if st.Round != 3 || st.ToolCalls != 3 || st.Usage.InputTokens != 30 || st.TaskRounds != 3 {
				t.Fatalf("state: round %d, calls %d, usage %+v, task rounds %d", st.Round, st.ToolCalls, st.Usage, st.TaskRounds)
			}
			if len(st.Messages) != 7 || st.Messages[0].Text != "hello" || st.Messages[2].CallID != "call_1_0" || st.Messages[6].Text != "out 3" {
				t.Fatalf("messages: %+v", st.Messages)
			}
			if len(rec.Tail) != 2 || rec.Tail[1].Phase != PhaseExecuting || !rec.Interrupted() {
				t.Fatalf("tail: %+v", rec.Tail)
			}
			if st.Labels.Tenant != "t1" || st.Status != StatusRunning || !st.UpdatedAt.Equal(t0) {
				t.Fatalf("labels %+v, status %s, updated %v (sub-second time must survive)", st.Labels, st.Status, st.UpdatedAt)
			}
		})
	}
}

// Results are applied in the order of the turn's calls, whatever order
// they were journaled in.
func TestResultsFollowCallOrder(t *testing.T) {
	s := NewMemStore()
	log := newAgent(t, s, "a1", 0)
	turn := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "x", Name: "t"}, {ID: "y", Name: "t"}}}
	must(t, log.Append(Record{Type: RecTurn, Message: &turn},
		Record{Type: RecResult, Call: "y", Result: &Result{Output: "second"}},
		Record{Type: RecResult, Call: "x", Result: &Result{Output: "first"}}))
	_, err := log.Commit(Record{Type: RecCommit, Round: 1})
	must(t, err)
	msgs := log.State().Messages
	if msgs[len(msgs)-2].Text != "first" || msgs[len(msgs)-1].Text != "second" {
		t.Fatalf("tool messages out of call order: %+v", msgs)
	}
}

func TestAbortDropsTheRound(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			log := newAgent(t, s, "a1", 1)
			must(t, log.Append(roundRecords(2)...))
			_, err := log.Commit(Record{Type: RecAbort, Round: 2, Reason: "replay"})
			must(t, err)
			commitRound(t, log, 2)
			log.Close()
			rec, err := s.Read("a1")
			must(t, err)
			if rec.State.Round != 2 || len(rec.Tail) != 0 || rec.State.ToolCalls != 2 {
				t.Fatalf("round %d tail %d calls %d", rec.State.Round, len(rec.Tail), rec.State.ToolCalls)
			}
		})
	}
}

// Compaction changes the files, never the state.
func TestCompactionKeepsState(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenFileStore(dir, WithCompactAfter(0))
	log := newAgent(t, s, "a1", 40)
	want := log.State()
	log.Close()
	snaps, _ := listRounds(filepath.Join(dir, "agents", "a1"), "snap-", ".cbor")
	if len(snaps) < 2 || len(snaps) > 2 {
		t.Fatalf("snapshots %v: want the newest and the previous", snaps)
	}
	if journals, _ := listRounds(filepath.Join(dir, "agents", "a1"), "journal-", ".log"); !reflect.DeepEqual(journals, snaps) {
		t.Fatalf("journals %v: want those of the snapshots %v", journals, snaps)
	}
	rec, err := s.Read("a1")
	must(t, err)
	if !reflect.DeepEqual(rec.State, want) {
		t.Fatalf("state after compaction differs:\n%+v\n%+v", rec.State, want)
	}
	// And the agent goes on from there.
	_, log2, err := s.Open("a1")
	must(t, err)
	commitRound(t, log2, 41)
	log2.Close()
	if rec, _ := s.Read("a1"); rec.State.Round != 41 {
		t.Fatalf("round %d after reopening", rec.State.Round)
	}
}

func TestUnknownAgentAndBadIDs(t *testing.T) {
	s, _ := OpenFileStore(t.TempDir())
	if _, err := s.Read("nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown agent: %v", err)
	}
	for _, id := range []string{"", "..", ".hidden", "a/b", "../../etc", string(make([]byte, 200))} {
		if _, err := s.Lock(id, ThisProcess("r")); err == nil {
			t.Errorf("id %q was accepted", id)
		}
	}
}

func TestBlobs(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			d, err := s.PutBlob([]byte("module bytes"))
			must(t, err)
			if d2, _ := s.PutBlob([]byte("module bytes")); d2 != d {
				t.Fatal("the same bytes got two digests")
			}
			b, err := s.Blob(d)
			if err != nil || string(b) != "module bytes" {
				t.Fatalf("%q %v", b, err)
			}
			if _, err := s.Blob("sha256:" + fmt.Sprintf("%064d", 0)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("missing blob: %v", err)
			}
		})
	}
}

func TestBlobCorruptionDetected(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenFileStore(dir)
	d, _ := s.PutBlob([]byte("module bytes"))
	path := filepath.Join(dir, "blobs", "sha256", d[len("sha256:"):])
	must(t, os.WriteFile(path, []byte("tampered"), 0o600))
	if _, err := s.Blob(d); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}

func TestList(t *testing.T) {
	s, _ := OpenFileStore(t.TempDir())
	newAgent(t, s, "b", 2).Close()
	log := newAgent(t, s, "a", 1)
	must(t, log.Append(Record{Type: RecRunEnded, Time: t0, Run: &RunInfo{ID: "run-1", Status: StatusDone}}))
	must(t, log.Sync())
	log.Close()
	lock, err := s.Lock("b", ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	list, err := s.List()
	must(t, err)
	if len(list) != 2 || list[0].ID != "a" || list[0].Status != StatusDone || list[0].Interrupted || list[0].Locked ||
		list[1].Round != 2 || !list[1].Interrupted || !list[1].Locked {
		t.Fatalf("list: %+v", list)
	}
	if one, err := s.Summary("b"); err != nil || !reflect.DeepEqual(one, list[1]) {
		t.Fatalf("summary of b: %+v, %v; want %+v", one, err, list[1])
	}
	if _, err := s.Summary("nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("summary of an unknown agent: %v, want ErrNotFound", err)
	}
}

// Regression: two agents created at once store the same module; neither
// may rename the other's temp file away.
func TestConcurrentPutBlob(t *testing.T) {
	s, _ := OpenFileStore(t.TempDir())
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		go func() {
			_, err := s.PutBlob([]byte("the same module"))
			errs <- err
		}()
	}
	for i := 0; i < 16; i++ {
		must(t, <-errs)
	}
}

// A young agent's journal is not compacted before it holds
// DefaultCompactAfter bytes, however small its snapshot; then the commit
// that reaches it compacts. With WithCompactAfter(0) the first commits do.
func TestCompactionWaitsForItsFloor(t *testing.T) {
	for _, tc := range []struct {
		opts  []FileStoreOption
		floor int64
	}{{nil, DefaultCompactAfter}, {[]FileStoreOption{WithCompactAfter(0)}, 0}} {
		dir := t.TempDir()
		s, err := OpenFileStore(dir, tc.opts...)
		must(t, err)
		log := newAgent(t, s, "a1", 0)
		must(t, log.Sync()) // a new agent's first mark is its first durable point's
		agentDir := filepath.Join(dir, "agents", "a1")
		for round := 1; ; round++ {
			before, ok := readMark(agentDir)
			if !ok {
				t.Fatal("no commit mark")
			}
			must(t, log.Append(roundRecords(round)...))
			n, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: round})
			must(t, err)
			size := before.journal + n // the journal the commit left, before any compaction
			snaps, _ := listRounds(agentDir, "snap-", ".cbor")
			if len(snaps) == 1 {
				if tc.floor > 0 && size >= tc.floor {
					t.Fatalf("floor %d: round %d left a journal of %d bytes uncompacted", tc.floor, round, size)
				}
				continue
			}
			if size < tc.floor {
				t.Fatalf("floor %d: round %d compacted a journal of %d bytes", tc.floor, round, size)
			}
			t.Logf("floor %d: first compaction at round %d, a journal of %d bytes", tc.floor, round, size)
			break
		}
		must(t, log.Close())
	}
}
