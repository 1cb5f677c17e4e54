package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// lateAgent is agent a1 of a store without group commit: round 1
// committed, round 2, a round of reads that spans pages, committed with
// CommitLate, and round 3's records appended while round 2's fdatasync ran. The test then plays a
// power cut that struck before that fdatasync returned.
type lateAgent struct {
	store                   *FileStore
	journal                 string
	written                 []byte // the journal as the page cache held it
	synced, committed2, end int64  // round 1's end, round 2's, the journal's
	marks                   markHistory
}

func newLateAgent(t *testing.T) *lateAgent {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	jl.snapLen = 1 << 30 // no compaction: the test cuts one journal
	a := &lateAgent{store: s, marks: markHistory{dir: filepath.Join(dir, "agents", "a1")}}
	a.marks.take(t)
	commitRound(t, log, 1)
	a.marks.take(t)
	a.synced = jl.size
	must(t, log.Append(readsRound(2)...))
	if _, err := jl.CommitLate(func(error) {}, Record{Type: RecCommit, Time: t0, Round: 2}); err != nil {
		t.Fatal(err)
	}
	a.committed2 = jl.size
	must(t, log.Append(roundRecords(3)...))
	a.end = jl.size
	must(t, log.Close())
	a.journal = filepath.Join(a.marks.dir, journalName(0))
	a.written, err = os.ReadFile(a.journal)
	must(t, err)
	return a
}

// Regression: a round goes on while the commit of the round before it
// syncs (CommitLate), so a power cut may keep pages of the next round and
// lose the page of that commit. The damage then has valid frames after
// it, the last commit before them among the lost, and recovery took it
// for corruption, refusing an agent whose every durable round was intact.
// It is the unsynced tail: whichever page is lost, and whether the mark
// says round 1 or nothing, the agent reads as round 1, or as round 2 when
// the lost page lies wholly past round 2's commit, and nothing is changed.
func TestTornLateCommitIsDropped(t *testing.T) {
	for _, mark := range []string{"round 1", "none"} {
		t.Run("mark at "+mark, func(t *testing.T) {
			probe := newLateAgent(t)
			pages := pagesBefore(probe.synced, probe.end)
			if len(pages) < 2 || (pages[1]+1)*pageSize >= probe.committed2 {
				t.Fatalf("round 2 spans bytes %d to %d: the test needs it to span pages", probe.synced, probe.committed2)
			}
			for _, p := range pages {
				a := newLateAgent(t)
				if mark == "round 1" {
					a.marks.at(t, 1)
				} else {
					removeMark(t, a.marks.dir)
				}
				must(t, os.WriteFile(a.journal, revertPage(a.written, a.synced, p), 0o600))
				before := agentFiles(t, a.marks.dir)
				rec, err := a.store.Read("a1")
				if err != nil {
					t.Fatalf("page %d lost: %v", p, err)
				}
				want := 1
				if p*pageSize >= a.committed2 {
					want = 2
				}
				if rec.State.Round != want {
					t.Fatalf("page %d lost: the agent reads as round %d, want %d", p, rec.State.Round, want)
				}
				sameFiles(t, "reading a torn journal", before, agentFiles(t, a.marks.dir))
			}
		})
	}
}

// A commit that a later commit follows was durable before the later one
// was written: damage before it is corruption still, whatever the mark
// says, with rounds committed late.
func TestDamageBeforeALateCommitThatACommitFollowsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	commitRound(t, log, 1)
	from := jl.size + 4 // in round 2's records, before its commit
	for r := 2; r <= 3; r++ {
		must(t, log.Append(roundRecords(r)...))
		if _, err := jl.CommitLate(func(error) {}, Record{Type: RecCommit, Time: t0, Round: r}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, log.Close())
	journal := filepath.Join(dir, "agents", "a1", journalName(0))
	data := mustRead(t, journal)
	removeMark(t, filepath.Dir(journal))
	data[from] ^= 0x10
	must(t, os.WriteFile(journal, data, 0o600))
	before := agentFiles(t, filepath.Dir(journal))
	_, err = s.Read("a1")
	checkRefused(t, err, journal, from-4, from+1)
	sameFiles(t, "refusing a damaged journal", before, agentFiles(t, filepath.Dir(journal)))
}

// The next commit is written only once the late one's fdatasync has
// returned (recovery relies on it), while appends go on meanwhile; done
// is called after the sync, and the mark then names the round.
func TestLateCommitOrder(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	commitRound(t, log, 1)
	journal := filepath.Join(dir, "agents", "a1", journalName(0))
	committing := make(chan struct{})
	var seen []byte
	stop := syncpoint.Observe(func(path string) {
		if path != journal || seen != nil {
			return
		}
		<-committing
		time.Sleep(20 * time.Millisecond) // room for a commit that did not wait to be written
		seen, _ = os.ReadFile(journal)
	})
	defer stop()
	must(t, log.Append(roundRecords(2)...))
	var doneAt []byte
	_, err = jl.CommitLate(func(err error) {
		must(t, err)
		doneAt = append([]byte{}, readMarkBytes(filepath.Dir(journal))...)
	}, Record{Type: RecCommit, Time: t0, Round: 2})
	must(t, err)
	must(t, log.Append(roundRecords(3)...)) // not held back by the sync
	close(committing)
	if _, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: 3}); err != nil {
		t.Fatal(err)
	}
	if seen == nil {
		t.Fatal("the late commit's fdatasync was never reported")
	}
	if bytes.Count(seen, []byte("turn 3")) != 1 {
		t.Fatal("round 3's records were not written while round 2's commit synced")
	}
	if n := commitsIn(t, seen); n != 2 {
		t.Fatalf("the journal held %d commits when round 2's sync returned, want 2: round 3's was written before it", n)
	}
	if m, ok := decodeMark(doneAt); !ok || m.round != 2 {
		t.Fatalf("when done was called the mark said %+v (ok %v), want round 2", m, ok)
	}
	must(t, log.Close())
	rec, err := s.Read("a1")
	must(t, err)
	checkRounds(t, "a1", rec.State, 3)
}

// commitsIn counts the Commit frames of a journal.
func commitsIn(t *testing.T, data []byte) int {
	t.Helper()
	fr, _, err := frames("journal", data)
	must(t, err)
	n := 0
	for _, f := range fr {
		if f.typ == RecCommit {
			n++
		}
	}
	return n
}

// A late commit whose fdatasync fails is told to done, and every later
// Commit, Sync and Close returns the failure, naming the round; nothing
// after it becomes part of the agent.
func TestLateCommitFailureIsReturnedByEveryLaterWrite(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	commitRound(t, log, 1)
	real := fdatasync
	fdatasync = func(int) error { return syscall.EIO }
	defer func() { fdatasync = real }()
	must(t, log.Append(roundRecords(2)...))
	told := make(chan error, 1)
	if _, err := jl.CommitLate(func(err error) { told <- err }, Record{Type: RecCommit, Time: t0, Round: 2}); err != nil {
		t.Fatal(err)
	}
	if err := <-told; !errors.Is(err, syscall.EIO) {
		t.Fatalf("done was told %v, want EIO", err)
	}
	fdatasync = real
	must(t, log.Append(roundRecords(3)...))
	_, commitErr := log.Commit(Record{Type: RecCommit, Time: t0, Round: 3})
	for what, err := range map[string]error{"commit": commitErr, "sync": log.Sync(), "close": log.Close()} {
		if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "make round 2 durable") {
			t.Fatalf("%s after a failed late commit: %v, want the failure naming round 2", what, err)
		}
	}
	if n := commitsIn(t, mustRead(t, filepath.Join(dir, "agents", "a1", journalName(0)))); n != 2 {
		t.Fatalf("the journal holds %d commits, want 2: nothing after the failure is written", n)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	must(t, err)
	return b
}
