package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// agentFiles reads every file of an agent's directory, by name.
func agentFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	must(t, err)
	return out
}

func sameFiles(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for name, b := range before {
		if after[name] != b {
			t.Fatalf("%s: %s changed", what, name)
		}
	}
}

// loseLock does to a held agent's lock file what a person or a script
// might: remove it, or put another file in its place.
var loseLock = map[string]func(t *testing.T, path string){
	"removed": func(t *testing.T, path string) { must(t, os.Remove(path)) },
	"replaced": func(t *testing.T, path string) {
		must(t, os.WriteFile(path+".new", nil, 0o600))
		must(t, os.Rename(path+".new", path))
	},
}

// Regression: with agents/<id>/lock removed or replaced while a run held
// it, a second process locked a new file and ran the agent at the same
// time. Now the second is refused as locked, and the first, at its next
// boundary, stops with a lockLostError: its round is not committed, and
// nothing more is made durable.
func TestLockFileLostMidRunNeverTwoWriters(t *testing.T) {
	for how, lose := range loseLock {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenFileStore(dir)
			must(t, err)
			log := newAgent(t, s, "a1", 2)
			agentDir := filepath.Join(dir, "agents", "a1")
			lose(t, filepath.Join(agentDir, "lock"))

			// A second store is a second writer, with flocks of its own.
			other, err := OpenFileStore(dir)
			must(t, err)
			if _, err := other.Lock("a1", ThisProcess("run-2")); !errors.Is(err, ErrLocked) {
				t.Fatalf("second writer: got %v, want ErrLocked", err)
			}
			if sum, _ := other.Summary("a1"); !sum.Locked {
				t.Fatal("ls does not show the agent as locked")
			}

			mark, err := os.ReadFile(filepath.Join(agentDir, markName))
			must(t, err)
			must(t, log.Append(roundRecords(3)...))
			_, err = log.Commit(Record{Type: RecCommit, Time: t0, Round: 3})
			var lost *lockLostError
			if !errors.As(err, &lost) || lost.How != how || !errors.Is(err, ErrLocked) {
				t.Fatalf("commit after the lock file was %s: got %v, want a LockLostError (%s) matching ErrLocked", how, err, how)
			}
			if err := log.Sync(); !errors.Is(err, ErrLockLost) {
				t.Fatalf("sync after the lock file was %s: got %v", how, err)
			}
			if now, _ := os.ReadFile(filepath.Join(agentDir, markName)); string(now) != string(mark) {
				t.Fatal("a holder that lost its lock moved the commit mark")
			}
			rec, err := other.Read("a1")
			must(t, err)
			checkRounds(t, "a1", rec.State, 2)

			// Once the first lets go, the second takes over where it stopped.
			must(t, log.Close())
			lock, err := other.Lock("a1", ThisProcess("run-2"))
			must(t, err)
			defer lock.Unlock()
			rec, log2, err := other.Open("a1")
			must(t, err)
			checkRounds(t, "a1", rec.State, 2)
			commitRound(t, log2, 3)
			must(t, log2.Close())
		})
	}
}

// Commits carry the epoch of the lock they were written under; each
// holding of the lock has its own.
func TestCommitsCarryTheLockEpoch(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	log.(unlockOnClose).Log.(*journalLog).snapLen = 1 << 30 // one journal
	commitRound(t, log, 1)
	must(t, log.Close())
	lock, err := s.Lock("a1", ThisProcess("run-2"))
	must(t, err)
	_, log, err = s.Open("a1")
	must(t, err)
	log.(*journalLog).snapLen = 1 << 30
	commitRound(t, log, 2)
	must(t, log.Close())
	must(t, lock.Unlock())

	data, err := os.ReadFile(filepath.Join(dir, "agents", "a1", journalName(0)))
	must(t, err)
	fr, _, err := frames("journal", data)
	must(t, err)
	var epochs []string
	for _, f := range fr[1:] {
		if rec, err := decodeRecord(f.typ, f.payload); err == nil && rec.Type == RecCommit {
			epochs = append(epochs, rec.Writer)
		}
	}
	if len(epochs) != 2 || epochs[0] == "" || epochs[1] == "" || epochs[0] == epochs[1] {
		t.Fatalf("commit epochs %q: want two different ones", epochs)
	}
}

// A journal in which an earlier holder of the lock commits again after a
// later one has is two writers' work: corruption, not a history.
func TestInterleavedWritersRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	jl.snapLen = 1 << 30
	held := jl.lock.epoch
	for r, epoch := range []string{held, "other", held} {
		jl.lock.epoch = epoch
		commitRound(t, log, r+1)
	}
	jl.lock.epoch = held
	must(t, log.Close())
	_, err = s.Read("a1")
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a CorruptError for two writers", err)
	}
}

// A lock taken for an agent that never got any state leaves nothing
// behind: a start that failed leaves no stub agent.
func TestLockOfAgentWithoutStateLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	agentDir := filepath.Join(dir, "agents", "a1")
	lock, err := s.Lock("a1", ThisProcess("run-1"))
	must(t, err)
	must(t, lock.Unlock())
	if _, err := os.Stat(agentDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a lock with no state left %s behind: %v", agentDir, err)
	}

	// Created and removed again under one lock: nothing either.
	lock, err = s.Lock("a1", ThisProcess("run-1"))
	must(t, err)
	log, err := s.Create("a1", NewState("a1", Definition{}, Labels{}, t0))
	must(t, err)
	must(t, log.Close())
	must(t, s.Remove("a1"))
	must(t, lock.Unlock())
	if _, err := os.Stat(agentDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a created and removed agent left %s behind: %v", agentDir, err)
	}

	// An agent that has state keeps its directory and lock file.
	must(t, newAgent(t, s, "a2", 1).Close())
	if _, err := os.Stat(filepath.Join(dir, "agents", "a2", "lock")); err != nil {
		t.Fatal(err)
	}
}

// Regression: an I/O error on the first fdatasync said only "input/output
// error". The error names the file and the step. (/dev/null cannot be
// synced: fdatasync fails on it as it would on a failing disk.) A new
// agent's first fdatasync is its first durable point's.
func TestSyncErrorNamesFileAndStep(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	lock, err := s.Lock("a1", ThisProcess("run-1"))
	must(t, err)
	defer lock.Unlock()
	journal := filepath.Join(dir, "agents", "a1", journalName(0))
	must(t, os.Symlink(os.DevNull, journal))
	log, err := s.Create("a1", NewState("a1", Definition{}, Labels{}, t0))
	must(t, err)
	defer log.Close()
	err = log.Sync()
	var pe *os.PathError
	if err == nil || !errors.As(err, &pe) || pe.Op != "fdatasync" || pe.Path != journal || !strings.Contains(err.Error(), "a1") {
		t.Fatalf("got %v, want an error naming the agent, fdatasync and %s", err, journal)
	}
}

// A new agent's directory syncs run in the background (first_syncs.go):
// Create leaves no commit mark, and its first durable point returns only
// once the agent's directory, agents/, blobs/ and the store's directory
// were synced, before the journal's own fdatasync; then it marks.
func TestNewAgentDurableByItsFirstSync(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	var mu sync.Mutex
	var synced []string
	stop := syncpoint.Observe(func(p string) {
		mu.Lock()
		synced = append(synced, p)
		mu.Unlock()
	})
	defer stop()
	lock, err := s.Lock("a1", ThisProcess("run-1"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", NewState("a1", Definition{}, Labels{}, t0))
	must(t, err)
	defer log.Close()
	agentDir := filepath.Join(dir, "agents", "a1")
	if _, marked := readMark(agentDir); marked {
		t.Error("a new agent is marked durable before its first durable point")
	}
	must(t, log.Sync())
	if _, marked := readMark(agentDir); !marked {
		t.Error("no commit mark after the first durable point")
	}
	mu.Lock()
	defer mu.Unlock()
	journal := filepath.Join(agentDir, journalName(0))
	at := map[string]int{}
	for i, p := range synced {
		if _, seen := at[p]; !seen {
			at[p] = i
		}
	}
	j, ok := at[journal]
	if !ok {
		t.Fatalf("syncs %v: the journal was not synced", synced)
	}
	for _, d := range []string{agentDir, filepath.Join(dir, "agents"), filepath.Join(dir, "blobs"), dir} {
		if i, ok := at[d]; !ok || i > j {
			t.Errorf("syncs %v: %s not synced before the journal", synced, d)
		}
	}
}
