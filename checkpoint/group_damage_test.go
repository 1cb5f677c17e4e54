package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// damagedGroup is an agent with three committed rounds whose only copy is
// a group log (its journal lost all but its header), which the test
// damages; commits holds the log's size after each commit.
type damagedGroup struct {
	dir     string
	store   *FileStore
	log     string
	data    []byte
	commits []int64
	marks   markHistory
}

func newDamagedGroup(t *testing.T) *damagedGroup {
	t.Helper()
	dir := t.TempDir()
	s := openGroupStore(t, dir)
	log := newAgent(t, s, "a1", 0)
	log.(unlockOnClose).Log.(*journalLog).snapLen = 1 << 30 // no compaction
	var commits []int64
	marks := markHistory{dir: filepath.Join(dir, "agents", "a1")}
	marks.take(t)
	for r := 1; r <= 3; r++ {
		commitRound(t, log, r)
		marks.take(t)
		s.group.mu.Lock()
		commits = append(commits, s.group.size)
		s.group.mu.Unlock()
	}
	must(t, log.Close())
	name := s.group.name
	crash(s)
	loseJournals(t, dir)
	data, err := os.ReadFile(name)
	must(t, err)
	classic, err := OpenFileStore(dir)
	must(t, err)
	return &damagedGroup{dir: dir, store: classic, log: name, data: data[:commits[2]], commits: commits, marks: marks}
}

func (d *damagedGroup) with(t *testing.T, data []byte) (*Recovered, error) {
	t.Helper()
	must(t, os.WriteFile(d.log, data, 0o600))
	return d.store.Read("a1")
}

// Cut anywhere in its last round, the group log redoes exactly the
// rounds before it.
func TestGroupLogTruncatedAtEveryOffset(t *testing.T) {
	d := newDamagedGroup(t)
	d.marks.at(t, 2)
	for cut := d.commits[1]; cut < int64(len(d.data)); cut++ {
		rec, err := d.with(t, d.data[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		checkRounds(t, "a1", rec.State, 2)
	}
	rec, err := d.with(t, d.data)
	must(t, err)
	checkRounds(t, "a1", rec.State, 3)
}

// Every single-bit flip before the group log's last round is corruption,
// reported with the log's name and an offset, never skipped.
func TestGroupLogEveryBitFlipDetected(t *testing.T) {
	d := newDamagedGroup(t)
	for i := int64(0); i < d.commits[1]; i++ {
		for bit := 0; bit < 8; bit++ {
			data := append([]byte(nil), d.data...)
			data[i] ^= 1 << bit
			_, err := d.with(t, data)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.File != d.log {
				t.Fatalf("flip of bit %d at byte %d: got %v, want a CorruptError naming the group log", bit, i, err)
			}
		}
	}
}

func TestGroupLogTails(t *testing.T) {
	for _, tt := range junkTails() {
		t.Run(tt.name, func(t *testing.T) {
			d := newDamagedGroup(t)
			rec, err := d.with(t, append(append([]byte(nil), d.data...), tt.tail...))
			if err != nil {
				t.Fatal(err)
			}
			checkRounds(t, "a1", rec.State, 3)
			// Adopting the log redoes it into the journal and removes it.
			s := openGroupStore(t, d.dir)
			if _, err := os.Stat(d.log); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the crashed store's log was not adopted: %v", err)
			}
			lock, err := s.Lock("a1", ThisProcess("r"))
			must(t, err)
			defer lock.Unlock()
			_, log, err := s.Open("a1")
			must(t, err)
			commitRound(t, log, 4)
			must(t, log.Close())
			must(t, s.Close())
			rec, err = d.store.Read("a1")
			must(t, err)
			checkRounds(t, "a1", rec.State, 4)
		})
	}
}

// A group log that was cut before its header was written holds nothing.
func TestGroupLogWithoutHeader(t *testing.T) {
	d := newDamagedGroup(t)
	d.marks.at(t, 0)
	for _, data := range [][]byte{nil, d.data[:5], make([]byte, 4096)} {
		rec, err := d.with(t, data)
		must(t, err)
		if rec.State.Round != 0 || len(rec.State.Messages) != 0 {
			t.Fatalf("a log without its header redid round %d", rec.State.Round)
		}
	}
}

// A group log of a newer format is refused, by readers, by Open and by
// adoption, and every file is left as it was.
func TestGroupLogFutureVersionRefusedAndUntouched(t *testing.T) {
	d := newDamagedGroup(t)
	fr, _, err := frames(d.log, d.data)
	must(t, err)
	data := append(groupHeaderFrame(groupVersion+1, t0), d.data[fr[1].off:]...)
	must(t, os.WriteFile(d.log, data, 0o600))
	agentDir := filepath.Join(d.dir, "agents", "a1")
	groupDir := filepath.Join(d.dir, "group")
	before := append(hashDir(t, agentDir), hashDir(t, groupDir)...)

	_, err = d.store.Read("a1")
	var fe *FutureSchemaError
	if !errors.As(err, &fe) || fe.File != d.log || fe.Version != groupVersion+1 || !errors.Is(err, ErrFutureSchema) {
		t.Fatalf("read: got %v, want a FutureSchemaError naming the group log", err)
	}
	s, err := OpenFileStore(d.dir, WithGroupCommit())
	must(t, err)
	for _, st := range []*FileStore{d.store, s} {
		lock, err := st.Lock("a1", ThisProcess("r"))
		must(t, err)
		if _, _, err := st.Open("a1"); !errors.Is(err, ErrFutureSchema) {
			t.Fatalf("open: got %v, want ErrFutureSchema", err)
		}
		lock.Unlock()
	}
	// Closing the store removes its own log, not the one it could not read.
	own := s.group.name
	must(t, s.Close())
	if _, err := os.Stat(own); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the store's own log is left: %v", err)
	}
	after := append(hashDir(t, agentDir), hashDir(t, groupDir)...)
	if !bytes.Equal(before, after) {
		t.Fatal("refusing a group log of a newer format changed files")
	}
}

func FuzzGroupLog(f *testing.F) {
	dir := f.TempDir()
	s, err := OpenFileStore(dir, WithGroupCommit(), withGroupLimit(1<<30))
	if err != nil {
		f.Fatal(err)
	}
	log := newAgent(f, s, "seed", 2)
	seed, _ := os.ReadFile(s.group.name)
	seed = seed[:s.group.size]
	log.Close()
	s.Close()
	torn := append([]byte(nil), seed...)
	clear(torn[len(torn)/2 : len(torn)/2+16])
	for _, data := range [][]byte{seed, seed[:len(seed)/2], torn, {}} {
		f.Add(data, false)
		f.Add(data, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, durable bool) {
		var got []groupEntry
		_, err := scanGroupLog("log", data, func(groupEntry) bool { return durable }, func(e groupEntry) { got = append(got, e) })
		if err != nil {
			return
		}
		// A torn tail, once cut off, stays cut off: the log up to where
		// its frames end reads as the same frames, whatever is durable.
		fr, err := groupFrames("log", data, func(groupEntry) bool { return durable })
		if err != nil {
			t.Fatalf("frames: %v, after scanning without error", err)
		}
		if len(fr) > 0 {
			last := fr[len(fr)-1]
			end := last.off + frameHeader + int64(len(last.payload))
			again, err := groupFrames("log", data[:end], func(groupEntry) bool { return true })
			if err != nil || len(again) != len(fr) {
				t.Fatalf("the log cut at %d reads %d frames, %v; want %d", end, len(again), err, len(fr))
			}
		}
		for _, e := range got {
			again, err := decodeGroupEntry(e.encode())
			if err != nil || again.agent != e.agent || again.base != e.base || again.snap != e.snap ||
				again.off != e.off || again.prefix != e.prefix || !bytes.Equal(again.data, e.data) {
				t.Fatalf("entry %+v does not survive encoding: %+v, %v", e, again, err)
			}
			redo(make([]byte, 64), e.base, e.snap, got)
		}
	})
}
