package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openRefused opens agent a1 of dir for writing, as resume does, and
// checks that it is refused as lost, naming want, with every file of the
// agent left as it was.
func openRefused(t *testing.T, dir, want string) {
	t.Helper()
	s, err := OpenFileStore(dir)
	must(t, err)
	agentDir := filepath.Join(dir, "agents", "a1")
	before := agentFiles(t, agentDir)
	lock, err := s.Lock("a1", ThisProcess("resume"))
	must(t, err)
	_, log, err := s.Open("a1")
	if err == nil {
		log.Close()
	}
	lock.Unlock()
	var lost *lostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrLost) {
		t.Fatalf("got %v, want a LostError", err)
	}
	if !strings.Contains(lost.Missing, want) {
		t.Fatalf("the error names %q, want it to name %s", lost.Missing, want)
	}
	if strings.Contains(err.Error(), "cairn resume") {
		t.Fatalf("the error tells the user to resume, which cannot work: %v", err)
	}
	if _, err := s.Read("a1"); !errors.Is(err, ErrLost) {
		t.Fatalf("Read: got %v, want ErrLost", err)
	}
	sameFiles(t, "a refused agent", before, agentFiles(t, agentDir))
}

// Regression: a journal cut at a frame boundary loaded as an older
// boundary, and resume ran committed rounds again over a workspace that
// had their changes. Cut at every frame boundary below what was durable,
// it is refused and nothing is changed.
func TestJournalCutAtEveryFrameBoundaryRefused(t *testing.T) {
	d := newDamaged(t)
	fr, end, err := frames(d.journal, d.data)
	must(t, err)
	for _, f := range append(fr, frame{off: end}) {
		if f.off == int64(len(d.data)) {
			continue
		}
		must(t, os.WriteFile(d.journal, d.data[:f.off], 0o600))
		openRefused(t, filepath.Dir(filepath.Dir(filepath.Dir(d.journal))), journalName(0))
	}
	// A journal cut to nothing, or into its header, is there but empty;
	// it was said to be missing.
	for _, n := range []int{0, 1} {
		must(t, os.WriteFile(d.journal, d.data[:n], 0o600))
		openRefused(t, filepath.Dir(filepath.Dir(filepath.Dir(d.journal))), journalName(0)+" is empty or shorter than its header")
	}
	// A journal that is gone altogether.
	must(t, os.Remove(d.journal))
	openRefused(t, filepath.Dir(filepath.Dir(filepath.Dir(d.journal))), journalName(0)+" is missing")
}

// Regression: a byte flipped in the journal's last durable record was
// reported as the journal cut short ("ends at byte N, but its first M
// bytes were durable"), though the file was whole. It is refused as
// damaged at that byte.
func TestFlipInTheLastDurableRecordIsDamageNotACut(t *testing.T) {
	d := newDamaged(t)
	fr, _, err := frames(d.journal, d.data)
	must(t, err)
	last := fr[len(fr)-1]
	flipped := bytes.Clone(d.data)
	flipped[len(flipped)-2] ^= 0xff
	must(t, os.WriteFile(d.journal, flipped, 0o600))
	openRefused(t, filepath.Dir(filepath.Dir(filepath.Dir(d.journal))), fmt.Sprintf("%s is damaged at byte %d", journalName(0), last.off))
}

// What was appended after the last durable point is a torn tail wherever
// it is cut: the records an append that never finished left are dropped,
// as before, and the agent opens at its boundary.
func TestCutAfterTheMarkIsATornTail(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	jl.snapLen = 1 << 30
	commitRound(t, log, 1)
	durable := jl.size
	must(t, log.Append(roundRecords(2)...)) // never synced
	size := jl.size
	must(t, log.Close())
	name := filepath.Join(dir, "agents", "a1", journalName(0))
	data, err := os.ReadFile(name)
	must(t, err)
	for cut := durable; cut <= size; cut++ {
		must(t, os.WriteFile(name, data[:cut], 0o600))
		rec, err := s.Read("a1")
		if err != nil {
			t.Fatalf("cut at %d, past the mark at %d: %v", cut, durable, err)
		}
		checkRounds(t, "a1", rec.State, 1)
	}
}

// compacted is an agent whose journal has been compacted into snapshots
// more than once; it returns the store's directory and the newest
// snapshot's round.
func compacted(t *testing.T) (string, int) {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenFileStore(dir, WithCompactAfter(0))
	must(t, err)
	must(t, newAgent(t, s, "a1", 8).Close())
	snaps, err := listRounds(filepath.Join(dir, "agents", "a1"), "snap-", ".cbor")
	must(t, err)
	if len(snaps) < 2 || snaps[len(snaps)-1] == 0 {
		t.Fatalf("snapshots %v: the test needs a compacted journal", snaps)
	}
	return dir, snaps[len(snaps)-1]
}

// Regression: a deleted newest snapshot loaded as the one before it, and
// resume ran the rounds since again. It is refused, by its journal or,
// with that gone too, by the mark, and nothing is changed.
func TestNewestSnapshotDeletedRefused(t *testing.T) {
	dir, newest := compacted(t)
	agentDir := filepath.Join(dir, "agents", "a1")
	must(t, os.Remove(filepath.Join(agentDir, snapName(newest))))
	openRefused(t, dir, snapName(newest)+" is missing")
	must(t, os.Remove(filepath.Join(agentDir, journalName(newest))))
	openRefused(t, dir, snapName(newest)+" is missing")
}

// An agent's only snapshot deleted (a young agent, not compacted yet) is
// committed data missing, not an agent that is not there: the commit
// mark says the snapshot was durable.
func TestOnlySnapshotDeletedRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	must(t, newAgent(t, s, "a1", 3).Close())
	agentDir := filepath.Join(dir, "agents", "a1")
	if snaps, _ := listRounds(agentDir, "snap-", ".cbor"); len(snaps) != 1 || snaps[0] != 0 {
		t.Fatalf("snapshots %v: the test needs an agent not compacted yet", snaps)
	}
	must(t, os.Remove(filepath.Join(agentDir, snapName(0))))
	openRefused(t, dir, snapName(0)+" is missing")
	// Nor is the agent made again over what it left.
	journal, err := os.ReadFile(filepath.Join(agentDir, journalName(0)))
	must(t, err)
	lock, err := s.Lock("a1", ThisProcess("run-2"))
	must(t, err)
	if !s.Exists("a1") {
		t.Error("an agent whose only snapshot is gone does not exist")
	}
	if _, err := s.Create("a1", NewState("a1", Definition{}, Labels{}, t0)); !errors.Is(err, ErrExists) {
		t.Errorf("create over it: %v, want ErrExists", err)
	}
	lock.Unlock()
	if after, _ := os.ReadFile(filepath.Join(agentDir, journalName(0))); !bytes.Equal(after, journal) {
		t.Error("the agent's journal changed")
	}
	must(t, os.Remove(filepath.Join(agentDir, journalName(0))))
	openRefused(t, dir, snapName(0)+" is missing")
	// Without its mark too, nothing says the agent was there.
	must(t, os.Remove(filepath.Join(agentDir, markName)))
	if _, err := s.Read("a1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read with no snapshot and no mark: %v, want ErrNotFound", err)
	}
}

// Regression: a young agent whose only snapshot and commit mark were both
// deleted was "not found", and a run of the same id made it again over its
// journal, applying every change a second time. The journal left says a
// snapshot was there: it is refused as lost, and not made again.
func TestOnlySnapshotAndMarkDeletedRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	must(t, newAgent(t, s, "a1", 3).Close())
	agentDir := filepath.Join(dir, "agents", "a1")
	must(t, os.Remove(filepath.Join(agentDir, snapName(0))))
	must(t, os.Remove(filepath.Join(agentDir, markName)))
	openRefused(t, dir, snapName(0)+" is missing (its journal "+journalName(0)+" is there)")
	_, err = s.Read("a1")
	if !strings.Contains(fmt.Sprint(err), "its files hold no snapshot") {
		t.Errorf("Read: %v, want it to say the files hold no snapshot", err)
	}
	journal, err := os.ReadFile(filepath.Join(agentDir, journalName(0)))
	must(t, err)
	lock, err := s.Lock("a1", ThisProcess("run-2"))
	must(t, err)
	if !s.Exists("a1") {
		t.Error("an agent with a journal but no snapshot does not exist")
	}
	if _, err := s.Create("a1", NewState("a1", Definition{}, Labels{}, t0)); !errors.Is(err, ErrExists) {
		t.Errorf("create over it: %v, want ErrExists", err)
	}
	lock.Unlock()
	if after, _ := os.ReadFile(filepath.Join(agentDir, journalName(0))); !bytes.Equal(after, journal) {
		t.Error("the agent's journal changed")
	}
}

// Rounds committed past the files' boundary are missing even when the
// journal that is left is as long as the mark says (a newer journal and
// snapshot replaced by older copies, say).
func TestMarkAheadOfRoundsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	must(t, newAgent(t, s, "a1", 1).Close())
	m, ok := readMark(filepath.Join(dir, "agents", "a1"))
	if !ok {
		t.Fatal("no commit mark")
	}
	m.round += 2
	must(t, os.WriteFile(filepath.Join(dir, "agents", "a1", markName), m.frame(), 0o600))
	openRefused(t, dir, "rounds 2 to 3 are missing")
}

// A mark that a crash left unwritten or torn claims nothing; the agent
// opens as its files say.
func TestUnreadableMarkClaimsNothing(t *testing.T) {
	for name, data := range map[string][]byte{"empty": nil, "torn": commitMark{base: 0, round: 9, journal: 1 << 20}.frame()[:7],
		"bad checksum": append([]byte{}, commitMark{round: 9}.frame()...)} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenFileStore(dir)
			must(t, err)
			must(t, newAgent(t, s, "a1", 2).Close())
			if name == "bad checksum" {
				data[len(data)-1] ^= 1
			}
			must(t, os.WriteFile(filepath.Join(dir, "agents", "a1", markName), data, 0o600))
			rec, err := s.Read("a1")
			must(t, err)
			checkRounds(t, "a1", rec.State, 2)
		})
	}
}

func FuzzDecodeMark(f *testing.F) {
	f.Add(commitMark{base: 3, round: 7, journal: 4096}.frame())
	f.Add([]byte{})
	f.Add(append(commitMark{round: 1}.frame(), 0xff, 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok := decodeMark(data)
		if !ok {
			return
		}
		if m.base < 0 || m.round < 0 || m.journal < 0 {
			t.Fatalf("decoded a negative mark %+v", m)
		}
		if again, ok := decodeMark(m.frame()); !ok || again != m {
			t.Fatalf("mark %+v does not survive encoding: %+v, %v", m, again, ok)
		}
	})
}

// A reader of an agent that another writer commits to, compaction
// included, never takes the writer's progress for lost data: it reads the
// mark before the files, and a journal whose snapshot appeared after it
// listed the snapshots is no orphan.
func TestReadWhileCommittingIsNeverLost(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir, WithCompactAfter(0))
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := s.Read("a1"); errors.Is(err, ErrLost) {
				errs <- err
				return
			}
		}
	}()
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for r := 1; r <= rounds; r++ {
		commitRound(t, log, r)
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatalf("a read during commits: %v", err)
	}
	must(t, log.Close())
}

// A writer that compacts twice between a reader's snapshot and its
// journal removes the journal the reader was about to replay. The reader
// reads again, over the writer's newer files, and does not report the
// removed journal as lost data.
func TestReadOvertakenByCompactionReadsAgain(t *testing.T) {
	for name, group := range map[string][]FileStoreOption{"alone": nil, "group": {WithGroupCommit()}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenFileStore(dir, append(group, WithCompactAfter(0))...)
			must(t, err)
			log := newAgent(t, s, "a1", 2)
			writer := log.(unlockOnClose).Log.(*journalLog)
			round := 2
			testHookSnapshotRead = func() {
				testHookSnapshotRead = nil
				first := writer.base
				for compactions, base := 0, first; compactions < 2; {
					round++
					commitRound(t, log, round)
					if writer.base != base {
						compactions, base = compactions+1, writer.base
					}
				}
				if _, err := os.Stat(filepath.Join(dir, "agents", "a1", journalName(first))); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("two compactions left the journal after snapshot %d: %v", first, err)
				}
			}
			defer func() { testHookSnapshotRead = nil }()
			rec, err := s.Read("a1")
			if err != nil {
				t.Fatalf("a read overtaken by two compactions: %v", err)
			}
			checkRounds(t, "a1", rec.State, round)
			must(t, log.Close())
		})
	}
}

// The mark is not synced, so a power cut may leave any earlier version of
// it: every one of them claims no more than the files hold, and the agent
// opens at its boundary.
func TestEveryEarlierMarkIsALowerBound(t *testing.T) {
	d := newDamaged(t)
	for r := range d.marks.bytes {
		d.marks.at(t, r)
		rec, err := d.with(t, d.data)
		if err != nil {
			t.Fatalf("the mark of round %d: %v", r, err)
		}
		checkRounds(t, "a1", rec.State, 3)
	}
}
