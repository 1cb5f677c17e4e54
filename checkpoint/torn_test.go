package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// pageSize is the unit in which the kernel writes a file back: a power
// cut may leave any of the pages written since the last sync on disk and
// lose any others, in any order.
var pageSize = int64(os.Getpagesize())

// revertPage is what a power cut may leave of a file that held written
// when it struck and whose first synced bytes were durable: written, but
// with page p as the disk last had it, the synced bytes in it and zeros
// after them (the file's space was reserved, and reads as zeros).
func revertPage(written []byte, synced, p int64) []byte {
	out := append([]byte(nil), written...)
	from, to := max(p*pageSize, synced), min((p+1)*pageSize, int64(len(out)))
	if from < to {
		clear(out[from:to])
	}
	return out
}

// pagesBefore lists the pages that hold bytes from synced on, but the page
// holding byte end-1: losing one of them leaves written bytes after it.
func pagesBefore(synced, end int64) []int64 {
	var ps []int64
	for p := synced / pageSize; (p+1)*pageSize < end; p++ {
		ps = append(ps, p)
	}
	return ps
}

// readsRound is round r of two reads, one of whose results spans pages, as
// the host journals a round whose calls change nothing: appended, with no
// sync until its commit.
func readsRound(r int) []Record {
	calls := []conversation.ToolCall{
		{ID: fmt.Sprintf("call_%d_0", r), Name: "read_file", Input: `{"path":"big"}`},
		{ID: fmt.Sprintf("call_%d_1", r), Name: "read_file", Input: `{"path":"small"}`},
	}
	turn := conversation.Message{Role: conversation.RoleAssistant, Text: fmt.Sprintf("turn %d", r), ToolCalls: calls}
	var big strings.Builder
	for i := 0; int64(big.Len()) < 3*pageSize; i++ {
		fmt.Fprintf(&big, "line %d of a big file\n", i)
	}
	recs := []Record{{Type: RecTurn, Time: t0, Round: r, Message: &turn, Usage: &conversation.Usage{InputTokens: 10, OutputTokens: 4}}}
	for _, c := range calls {
		recs = append(recs, Record{Type: RecPhase, Time: t0, Round: r, Call: c.ID, Tool: c.Name, Phase: PhaseExecuting})
	}
	return append(recs,
		Record{Type: RecResult, Time: t0, Round: r, Call: calls[0].ID, Tool: "read_file", Result: &Result{Output: big.String()}},
		Record{Type: RecResult, Time: t0, Round: r, Call: calls[1].ID, Tool: "read_file", Result: &Result{Output: "small"}})
}

// checkTailOf checks that tail is a prefix of the records of round recs.
func checkTailOf(t *testing.T, tail, recs []Record) {
	t.Helper()
	if len(tail) > len(recs) {
		t.Fatalf("a tail of %d records, from a round of %d", len(tail), len(recs))
	}
	for i, rec := range tail {
		if rec.Type != recs[i].Type || rec.Call != recs[i].Call || rec.Round != recs[i].Round {
			t.Fatalf("tail record %d is a %s of call %q, want a %s of call %q", i, rec.Type, rec.Call, recs[i].Type, recs[i].Call)
		}
	}
}

// tornAgent is agent a1 of a store without group commit: rounds 1 and 2
// committed, then round 3, a round of reads, appended and, with commit,
// committed too. The test then plays a power cut that struck before
// round 3 was durable (during its commit's fdatasync, with commit).
type tornAgent struct {
	dir, journal string
	store        *FileStore
	written      []byte // the journal file as the page cache held it
	synced, end  int64  // the journal's durable length, and its length
	marks        markHistory
	round        []Record
}

func newTornAgent(t *testing.T, commit bool) *tornAgent {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	jl.snapLen = 1 << 30 // no compaction: the test cuts one journal
	a := &tornAgent{dir: dir, store: s, marks: markHistory{dir: filepath.Join(dir, "agents", "a1")}, round: readsRound(3)}
	a.marks.take(t)
	for r := 1; r <= 2; r++ {
		commitRound(t, log, r)
		a.marks.take(t)
	}
	a.synced = jl.size
	must(t, log.Append(a.round...))
	if commit {
		_, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: 3})
		must(t, err)
	}
	a.end = jl.size
	must(t, log.Close())
	a.journal = filepath.Join(a.marks.dir, journalName(0))
	a.written, err = os.ReadFile(a.journal)
	must(t, err)
	if len(pagesBefore(a.synced, a.end)) < 2 {
		t.Fatalf("round 3 spans bytes %d to %d: the test needs it to span pages", a.synced, a.end)
	}
	return a
}

// resumeAfter opens a1 for writing as resume does (resumeTorn) and checks
// that nothing of the torn tail is left past the records.
func (a *tornAgent) resumeAfter(t *testing.T, s *FileStore) {
	t.Helper()
	resumeTorn(t, s, a.dir, func(rec *Recovered) {
		data, err := os.ReadFile(a.journal)
		must(t, err)
		if validFrameAfter(data, rec.JournalBytes, anyFrame) {
			t.Fatalf("opening for write left frames of the torn tail past byte %d", rec.JournalBytes)
		}
	})
}

// resumeTorn opens a1 of the store s in dir for writing as resume does,
// checks it at round 2 (and with opened, what opening left), drops the
// round it finds interrupted, commits round 3 again, and checks that the
// agent then reads as rounds 1 to 3 from a store opened afresh.
func resumeTorn(t *testing.T, s *FileStore, dir string, opened func(*Recovered)) {
	t.Helper()
	lock, err := s.Lock("a1", ThisProcess("resume"))
	must(t, err)
	defer lock.Unlock()
	rec, log, err := s.Open("a1")
	must(t, err)
	checkRounds(t, "a1", rec.State, 2)
	if opened != nil {
		opened(rec)
	}
	if len(rec.Tail) > 0 {
		_, err := log.Commit(Record{Type: RecAbort, Time: t0, Round: 3})
		must(t, err)
	}
	commitRound(t, log, 3)
	must(t, log.Close())
	back, err := OpenFileStore(dir)
	must(t, err)
	rec, err = back.Read("a1")
	must(t, err)
	checkRounds(t, "a1", rec.State, 3)
}

// Regression: a round of reads journals its records without a sync of its
// own. A power cut while the kernel wrote them back could put a later page
// of them on disk and not an earlier one, and recovery took the damage
// followed by valid frames for corruption and refused the agent, although
// every committed round was durable. Wherever the page lost is, and
// whatever the commit mark says (the last commit, an older one, or
// nothing), the damage and everything after it is the unsynced tail: it
// is dropped, the agent opens at round 2, and opening for write cuts the
// tail off. So too when round 3's Commit was written and the cut struck
// during its fdatasync: the commit was never acknowledged.
func TestTornUnsyncedTailIsDropped(t *testing.T) {
	for _, commit := range []bool{false, true} {
		for _, mark := range []string{"the last commit", "an older commit", "none"} {
			t.Run(fmt.Sprintf("commit %v, mark at %s", commit, mark), func(t *testing.T) {
				pages := pagesBefore(newTornAgent(t, commit).synced, newTornAgent(t, commit).end)
				for _, p := range pages {
					a := newTornAgent(t, commit)
					switch mark {
					case "the last commit":
						a.marks.at(t, 2)
					case "an older commit":
						a.marks.at(t, 1)
					default:
						removeMark(t, a.marks.dir)
					}
					must(t, os.WriteFile(a.journal, revertPage(a.written, a.synced, p), 0o600))
					before := agentFiles(t, a.marks.dir)
					rec, err := a.store.Read("a1")
					if err != nil {
						t.Fatalf("page %d lost: %v", p, err)
					}
					checkRounds(t, "a1", rec.State, 2)
					checkTailOf(t, rec.Tail, a.round)
					if rec.JournalBytes < a.synced || rec.JournalBytes > max(a.synced, p*pageSize) {
						t.Fatalf("page %d lost: the journal reads as %d bytes, want %d to %d", p, rec.JournalBytes, a.synced, max(a.synced, p*pageSize))
					}
					sameFiles(t, "reading a torn journal", before, agentFiles(t, a.marks.dir))
					a.resumeAfter(t, a.store)
				}
			})
		}
	}
}

// removeMark removes an agent's commit mark, as a crash before its first
// write back may leave it.
func removeMark(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, markName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// checkRefused checks that err is a *CorruptError naming file at an
// offset from lo to hi, whose message says what to do.
func checkRefused(t *testing.T, err error, file string, lo, hi int64) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.File != file {
		t.Fatalf("got %v, want a CorruptError naming %s", err, file)
	}
	if ce.Offset < lo || ce.Offset >= hi {
		t.Fatalf("the error names offset %d, want one from %d to %d", ce.Offset, lo, hi)
	}
	if msg := err.Error(); !strings.Contains(msg, "nothing was changed") || !strings.Contains(msg, "restore") {
		t.Fatalf("the error does not say that nothing changed and what to do: %v", err)
	}
}

// Damage inside what was committed is corruption, not a torn tail, even
// when the commit mark is older than the damage or gone (a later round's
// Commit with a record after it shows that the damaged bytes were synced):
// Read and Open refuse it, name the journal and the offset, and leave
// every file as it was.
func TestDamageBeforeLastCommitRefused(t *testing.T) {
	d := newDamaged(t)
	for _, mark := range []string{"the last commit", "round 1", "none"} {
		for _, how := range []string{"zeros", "a flipped bit"} {
			t.Run(mark+", "+how, func(t *testing.T) {
				switch mark {
				case "the last commit":
					d.marks.at(t, 3)
				case "round 1":
					d.marks.at(t, 1)
				default:
					removeMark(t, d.marks.dir)
				}
				// Round 2's records: before the Commit of round 2, which
				// round 3's records follow.
				data := append([]byte(nil), d.data...)
				from, to := d.commits[0], d.commits[0]+20
				if how == "zeros" {
					clear(data[from:to])
				} else {
					data[from+12] ^= 0x04
				}
				must(t, os.WriteFile(d.journal, data, 0o600))
				before := agentFiles(t, d.marks.dir)
				_, err := d.store.Read("a1")
				checkRefused(t, err, d.journal, from, to)
				lock, err := d.store.Lock("a1", ThisProcess("resume"))
				must(t, err)
				_, log, err := d.store.Open("a1")
				if err == nil {
					log.Close()
				}
				lock.Unlock()
				checkRefused(t, err, d.journal, from, to)
				sameFiles(t, "refusing a damaged journal", before, agentFiles(t, d.marks.dir))
			})
		}
	}
}

// tornGroup is agent a1 of a store with group commit: rounds 1 and 2
// committed, then round 3, a round of reads, appended and committed, its
// batch of the group log spanning pages. The test then plays a power cut
// during the fdatasync of that batch.
type tornGroup struct {
	dir, log, journal string
	logData           []byte // the group log as the page cache held it
	synced, end       int64  // the log's durable length, and its length
	journalData       []byte // the journal as the page cache held it
	journalSynced     int64  // the journal's length after round 2
	journalEnd        int64  // and after round 3
	marks             markHistory
}

func newTornGroup(t *testing.T) *tornGroup {
	t.Helper()
	dir := t.TempDir()
	s := openGroupStore(t, dir, withGroupLimit(1<<30))
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	jl.snapLen = 1 << 30 // no compaction
	a := &tornGroup{dir: dir, marks: markHistory{dir: filepath.Join(dir, "agents", "a1")}}
	a.marks.take(t)
	for r := 1; r <= 2; r++ {
		commitRound(t, log, r)
		a.marks.take(t)
	}
	groupSize := func() int64 {
		s.group.mu.Lock()
		defer s.group.mu.Unlock()
		return s.group.size
	}
	a.synced, a.journalSynced = groupSize(), jl.size
	must(t, log.Append(readsRound(3)...))
	_, err := log.Commit(Record{Type: RecCommit, Time: t0, Round: 3})
	must(t, err)
	a.end, a.journalEnd = groupSize(), jl.size
	a.marks.take(t)
	must(t, log.Close())
	a.log = s.group.name
	crash(s)
	a.logData, err = os.ReadFile(a.log)
	must(t, err)
	a.journal = filepath.Join(a.marks.dir, journalName(0))
	a.journalData, err = os.ReadFile(a.journal)
	must(t, err)
	if len(pagesBefore(a.synced, a.end)) < 2 {
		t.Fatalf("round 3's batch spans bytes %d to %d: the test needs it to span pages", a.synced, a.end)
	}
	return a
}

// Regression: a group log's batch is written and synced with one
// fdatasync; a power cut during it could put a later page of the batch on
// disk and not an earlier one, and every reader of the store took the
// damage followed by valid entries for corruption: no agent of the store
// could be read or resumed. The batch's commits were never acknowledged,
// and no agent's commit mark covers an entry after the damage, so it is
// a torn tail: dropped, whatever the journal kept of the round (nothing
// past its header, or all of it), and the log is adopted.
func TestTornUnsyncedGroupBatchIsDropped(t *testing.T) {
	for _, journal := range []string{"lost", "kept"} {
		t.Run("journal "+journal, func(t *testing.T) {
			first := newTornGroup(t)
			for _, p := range pagesBefore(first.synced, first.end) {
				a := newTornGroup(t)
				a.marks.at(t, 2)
				must(t, os.WriteFile(a.log, revertPage(a.logData, a.synced, p), 0o600))
				must(t, os.WriteFile(a.journal, a.journalData, 0o600))
				if journal == "lost" {
					loseJournals(t, a.dir)
				}
				s, err := OpenFileStore(a.dir)
				must(t, err)
				rec, err := s.Read("a1")
				if err != nil {
					t.Fatalf("page %d of the log lost: %v", p, err)
				}
				if journal == "kept" {
					// The journal holds round 3 whole, Commit and all: it counts.
					if rec.State.Round != 3 {
						t.Fatalf("page %d of the log lost: round %d, want the journal's round 3", p, rec.State.Round)
					}
					continue
				}
				checkRounds(t, "a1", rec.State, 2)
				g := openGroupStore(t, a.dir)
				if logs := groupLogs(t, a.dir); len(logs) != 1 || logs[0] == a.log {
					t.Fatalf("the torn log was not adopted: %v", logs)
				}
				a.resumeGroup(t, g)
				must(t, g.Close())
			}
		})
	}
}

// resumeGroup opens a1 of the group store s for writing, drops what it
// finds interrupted, commits round 3 again and checks the result.
func (a *tornGroup) resumeGroup(t *testing.T, s *FileStore) {
	t.Helper()
	resumeTorn(t, s, a.dir, nil)
}

// Regression: with group commit an agent's journal is not synced at each
// commit, so a power cut may tear it as it tears any unsynced append. A
// group log that never got round 3's batch redoes rounds 1 and 2; the
// journal's torn round 3 after them is dropped, not refused.
func TestTornJournalUnderGroupCommitIsDropped(t *testing.T) {
	first := newTornGroup(t)
	for _, p := range pagesBefore(first.journalSynced, first.journalEnd) {
		a := newTornGroup(t)
		a.marks.at(t, 2)
		must(t, os.WriteFile(a.log, a.logData[:a.synced], 0o600))
		must(t, os.WriteFile(a.journal, revertPage(a.journalData, a.journalSynced, p), 0o600))
		s, err := OpenFileStore(a.dir)
		must(t, err)
		rec, err := s.Read("a1")
		if err != nil {
			t.Fatalf("page %d of the journal lost: %v", p, err)
		}
		checkRounds(t, "a1", rec.State, 2)
		g := openGroupStore(t, a.dir)
		a.resumeGroup(t, g)
		must(t, g.Close())
	}
}

// Damage inside what a group log made durable is corruption: a later
// entry that an agent's commit mark covers was synced, and the damage
// with it. Readers, Open and adoption refuse it, naming the log, and
// leave every file as it was.
func TestGroupLogDamageBeforeLastCommitRefused(t *testing.T) {
	a := newTornGroup(t)
	a.marks.at(t, 3)
	loseJournals(t, a.dir)
	// Round 2's entries, which round 3's follow.
	data := append([]byte(nil), a.logData...)
	fr, _, err := frames(a.log, data[:a.synced])
	must(t, err)
	from := fr[len(fr)-2].off
	clear(data[from : from+16])
	must(t, os.WriteFile(a.log, data, 0o600))
	groupDir := filepath.Join(a.dir, "group")
	before := agentFiles(t, a.marks.dir)
	logsBefore := agentFiles(t, groupDir)

	s, err := OpenFileStore(a.dir)
	must(t, err)
	_, err = s.Read("a1")
	checkRefused(t, err, a.log, from, from+16)
	g, err := OpenFileStore(a.dir, WithGroupCommit())
	must(t, err)
	for _, st := range []*FileStore{s, g} {
		lock, err := st.Lock("a1", ThisProcess("resume"))
		must(t, err)
		_, log, err := st.Open("a1")
		if err == nil {
			log.Close()
		}
		lock.Unlock()
		checkRefused(t, err, a.log, from, from+16)
	}
	own := g.group.name
	must(t, g.Close())
	sameFiles(t, "refusing a damaged group log", before, agentFiles(t, a.marks.dir))
	if _, err := os.Stat(own); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the store's own log is left: %v", err)
	}
	sameFiles(t, "refusing a damaged group log", logsBefore, agentFiles(t, groupDir))
}
