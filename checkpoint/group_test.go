package checkpoint

import (
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// openGroupStore opens a store with group commit, closed at the end of
// the test unless the test crashed it.
func openGroupStore(t testing.TB, dir string, opts ...FileStoreOption) *FileStore {
	t.Helper()
	s, err := OpenFileStore(dir, append([]FileStoreOption{WithGroupCommit()}, opts...)...)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// crash abandons a store with group commit as a killed process would: what
// its group log holds stays, what was only queued is lost, and the log is
// no longer locked.
func crash(s *FileStore) {
	g := s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.flushing {
		g.cond.Wait()
	}
	g.err = errStoreClosed
	g.f.Close()
	closeAll(g.dirty)
	g.dirty = nil
}

// loseJournals does to the newest journal of every agent what a power cut
// may do to bytes that were written but never synced: with group commit
// that is everything after the header of a journal that was never synced
// since. Odd agents keep their size and read zeros, even ones are cut.
func loseJournals(t *testing.T, storeDir string) {
	t.Helper()
	agents, err := os.ReadDir(filepath.Join(storeDir, "agents"))
	must(t, err)
	for i, a := range agents {
		dir := filepath.Join(storeDir, "agents", a.Name())
		snaps, err := listRounds(dir, "snap-", ".cbor")
		must(t, err)
		name := filepath.Join(dir, journalName(snaps[len(snaps)-1]))
		data, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		must(t, err)
		fr, _, err := frames(name, data)
		must(t, err)
		if len(fr) == 0 {
			continue // cut before its header, as compaction may leave it
		}
		hdr := fr[0].off + frameHeader + int64(len(fr[0].payload))
		if i%2 == 0 {
			must(t, os.Truncate(name, hdr))
			continue
		}
		clear(data[hdr:])
		must(t, os.WriteFile(name, data, 0o600))
	}
}

// groupLogs lists the group logs of a store.
func groupLogs(t *testing.T, storeDir string) []string {
	t.Helper()
	names, err := groupLogNames(filepath.Join(storeDir, "group"))
	must(t, err)
	return names
}

// checkRounds checks that st is exactly an agent of newAgent after rounds
// 1 to r of commitRound (the user's prompt counts from round 1 on).
func checkRounds(t *testing.T, id string, st *State, r int) {
	t.Helper()
	n := len(st.Messages)
	if r == 0 && st.Round == 0 && n == 0 {
		return
	}
	if st.Round != r || st.ToolCalls != r || n != 1+2*r || st.Messages[0].Text != "hello" ||
		(r > 0 && (st.Messages[n-2].Text != fmt.Sprintf("turn %d", r) || st.Messages[n-1].Text != fmt.Sprintf("out %d", r))) {
		t.Fatalf("agent %s: round %d, %d calls, %d messages; want exactly rounds 1 to %d", id, st.Round, st.ToolCalls, n, r)
	}
}

// readAll reads every agent of the store in dir, with a store without
// group commit, and checks that each has exactly its rounds.
func readAll(t *testing.T, dir string, rounds map[string]int) {
	t.Helper()
	s, err := OpenFileStore(dir)
	must(t, err)
	for id, r := range rounds {
		rec, err := s.Read(id)
		if err != nil {
			t.Fatalf("agent %s: %v", id, err)
		}
		checkRounds(t, id, rec.State, r)
		if len(rec.Tail) != 0 {
			t.Fatalf("agent %s: %d records after its last commit", id, len(rec.Tail))
		}
	}
}

// 64 agents commit rounds at once through one group log; every agent then
// reads back exactly its rounds: while the store is open, after a crash
// that loses every unsynced journal byte, after another store adopted the
// crashed one's log, and after that store was closed.
func TestGroupCommitConcurrent(t *testing.T) {
	const agents, rounds = 64, 12
	dir := t.TempDir()
	s := openGroupStore(t, dir)
	want := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for i := 0; i < agents; i++ {
		id := fmt.Sprintf("a%02d", i)
		want[id] = rounds
		log := newAgent(t, s, id, 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer log.Close()
			for r := 1; r <= rounds; r++ {
				if i%4 == 0 && r == 3 { // a round dropped and done again
					if err := log.Append(roundRecords(r)...); err != nil {
						errs <- err
						return
					}
					if _, err := log.Commit(Record{Type: RecAbort, Round: r, Reason: "replay"}); err != nil {
						errs <- err
						return
					}
				}
				if err := log.Append(roundRecords(r)...); err != nil {
					errs <- err
					return
				}
				if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	readAll(t, dir, want)
	t.Logf("%d rounds, %d fdatasyncs of the group log", agents*rounds, s.group.syncs.Load())

	crash(s)
	loseJournals(t, dir)
	readAll(t, dir, want)

	s2 := openGroupStore(t, dir)
	if logs := groupLogs(t, dir); len(logs) != 1 || logs[0] != s2.group.name {
		t.Fatalf("group logs after adopting: %v, want only %s", logs, s2.group.name)
	}
	readAll(t, dir, want)
	for id := range want {
		lock, err := s2.Lock(id, ThisProcess("run-2"))
		must(t, err)
		_, log, err := s2.Open(id)
		must(t, err)
		commitRound(t, log, rounds+1)
		must(t, log.Close())
		lock.Unlock()
		want[id] = rounds + 1
	}
	must(t, s2.Close())
	if logs := groupLogs(t, dir); len(logs) != 0 {
		t.Fatalf("group logs after closing the store: %v", logs)
	}
	readAll(t, dir, want)
}

// A group log past its limit is replaced once the journals it redoes are
// synced; the agents lose nothing.
func TestGroupLogReplaced(t *testing.T) {
	const agents, rounds = 8, 30
	dir := t.TempDir()
	s := openGroupStore(t, dir, withGroupLimit(8<<10))
	first := s.group.name
	want := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < agents; i++ {
		id := fmt.Sprintf("a%d", i)
		want[id] = rounds
		log := newAgent(t, s, id, 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer log.Close()
			for r := 1; r <= rounds; r++ {
				log.Append(roundRecords(r)...)
				if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if _, err := os.Stat(first); !errors.Is(err, os.ErrNotExist) || s.group.name == first {
		t.Fatalf("the first group log is still in use or left behind: %v", err)
	}
	if logs := groupLogs(t, dir); len(logs) != 1 {
		t.Fatalf("group logs: %v, want one", logs)
	}
	readAll(t, dir, want)
	crash(s)
	readAll(t, dir, want)
}

// Closing a log makes what was appended durable, even without a commit:
// the interrupted round survives a crash that loses the journal.
func TestGroupLogCloseSyncs(t *testing.T) {
	dir := t.TempDir()
	s := openGroupStore(t, dir)
	log := newAgent(t, s, "a1", 2)
	must(t, log.Append(roundRecords(3)[:2]...))
	must(t, log.Close())
	crash(s)
	loseJournals(t, dir)
	rec, err := s.Read("a1")
	must(t, err)
	checkRounds(t, "a1", rec.State, 2)
	if len(rec.Tail) != 2 || rec.Tail[1].Phase != PhaseExecuting {
		t.Fatalf("tail %+v, want the two records of round 3", rec.Tail)
	}
}

// Once its store is closed, a log still open fails to append and commit.
func TestGroupStoreClosed(t *testing.T) {
	s := openGroupStore(t, t.TempDir())
	log := newAgent(t, s, "a1", 1)
	must(t, s.Close())
	if err := log.Append(roundRecords(2)...); !errors.Is(err, errStoreClosed) {
		t.Fatalf("append after the store closed: %v", err)
	}
	if _, err := log.Commit(Record{Type: RecCommit, Round: 2}); !errors.Is(err, errStoreClosed) {
		t.Fatalf("commit after the store closed: %v", err)
	}
	log.Close()
	rec, err := s.Read("a1")
	must(t, err)
	checkRounds(t, "a1", rec.State, 1)
}

// A group log's entries for an agent that was removed and created again
// are not redone over the new agent's journal: its snapshots and journals
// differ from the earlier agent's (another creation time, another run).
func TestGroupRedoIgnoresEarlierAgent(t *testing.T) {
	dir := t.TempDir()
	s := openGroupStore(t, dir)
	newAgent(t, s, "a1", 3).Close()
	crash(s)

	classic, _ := OpenFileStore(dir)
	lock, err := classic.Lock("a1", ThisProcess("r"))
	must(t, err)
	must(t, classic.Remove("a1"))
	log, err := classic.Create("a1", NewState("a1", Definition{Workspace: "/ws"}, Labels{Tenant: "t1"}, t0.Add(1)))
	must(t, err)
	must(t, log.Append(Record{Type: RecRunStarted, Time: t0, Run: &RunInfo{ID: "run-2", Started: t0}},
		Record{Type: RecUser, Time: t0, Message: &conversation.Message{Role: conversation.RoleUser, Text: "hello"}}))
	commitRound(t, log, 1)
	log.Close()
	lock.Unlock()
	for _, s := range []*FileStore{classic, openGroupStore(t, dir)} {
		rec, err := s.Read("a1")
		must(t, err)
		checkRounds(t, "a1", rec.State, 1)
	}
}

// redo applies an entry only over the bytes it was appended after.
func TestRedo(t *testing.T) {
	entry := func(prefix []byte, data string) groupEntry {
		e := groupEntry{base: 0, snap: 7, off: int64(len(prefix)), data: []byte(data)}
		e.prefix = crc32.Checksum(prefix, castagnoli)
		return e
	}
	e1 := entry([]byte("HEADER"), "one.")
	e2 := entry([]byte("HEADERone."), "two.")
	e3 := entry([]byte("HEADERone.two."), "three.")
	other := entry([]byte("HEADERuno."), "dos.")
	tests := []struct {
		name    string
		journal string
		entries []groupEntry
		want    string
		changed bool
	}{
		{"all lost", "HEADER", []groupEntry{e1, e2, e3}, "HEADERone.two.three.", true},
		{"holes", "HEADERone.\x00\x00\x00\x00three.", []groupEntry{e1, e2, e3}, "HEADERone.two.three.", true},
		{"nothing lost", "HEADERone.two.three.", []groupEntry{e1, e2, e3}, "HEADERone.two.three.", false},
		{"a lost entry stops the chain", "HEADER", []groupEntry{e1, e3}, "HEADERone.", true},
		{"another history", "HEADERuno.", []groupEntry{other, e2, e3}, "HEADERuno.dos.", true},
		{"beyond the end", "HEAD", []groupEntry{e1}, "HEAD", false},
		{"another snapshot", "HEADER", []groupEntry{{snap: 8, off: 6, prefix: e1.prefix, data: []byte("x")}}, "HEADER", false},
		{"another segment", "HEADER", []groupEntry{{base: 1, snap: 7, off: 6, prefix: e1.prefix, data: []byte("x")}}, "HEADER", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, from, to := redo([]byte(tt.journal), 0, 7, tt.entries)
			if string(out) != tt.want || (from < to) != tt.changed {
				t.Fatalf("got %q, changed %d..%d; want %q", out, from, to, tt.want)
			}
		})
	}
}

func TestChecksumPrefixReadsOnlyThePrefix(t *testing.T) {
	name := filepath.Join(t.TempDir(), "journal")
	data := append([]byte("records"), make([]byte, 1<<20)...)
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := checksumPrefix(name, 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := crc32.Checksum([]byte("records"), castagnoli); got != want {
		t.Errorf("checksumPrefix = %08x, want %08x, the checksum of the first 7 bytes", got, want)
	}
	if _, err := checksumPrefix(name, int64(len(data))+1); err == nil || !strings.Contains(err.Error(), "shorter than its records") {
		t.Errorf("checksumPrefix past the end: %v, want an error saying the journal is shorter than its records", err)
	}
}
