package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// damaged is an agent with three committed rounds whose journal the test
// damages; commits holds the journal's size after each commit.
type damaged struct {
	store   *FileStore
	journal string
	data    []byte
	commits []int64
	marks   markHistory
}

// markHistory holds an agent's commit mark as it was after each round
// (index 0: after its creation).
type markHistory struct {
	dir   string
	bytes [][]byte
}

func (m *markHistory) take(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.dir, markName))
	must(t, err)
	m.bytes = append(m.bytes, b)
}

// at puts back the mark as it was after round r: what a crash during the
// round after it leaves, since a round's mark is written only once the
// round is durable.
func (m *markHistory) at(t testing.TB, r int) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(m.dir, markName), m.bytes[r], 0o600))
}

func newDamaged(t *testing.T) *damaged {
	t.Helper()
	dir := t.TempDir()
	s, _ := OpenFileStore(dir)
	log := newAgent(t, s, "a1", 0)
	jl := log.(unlockOnClose).Log.(*journalLog)
	jl.snapLen = 1 << 30 // no compaction: the test damages one journal
	var commits []int64
	marks := markHistory{dir: filepath.Join(dir, "agents", "a1")}
	marks.take(t)
	for r := 1; r <= 3; r++ {
		commitRound(t, log, r)
		commits = append(commits, jl.size)
		marks.take(t)
	}
	log.Close()
	journal := filepath.Join(dir, "agents", "a1", journalName(0))
	data, err := os.ReadFile(journal)
	must(t, err)
	// The journal's reserved space past its last record is not part of it.
	data = data[:commits[2]]
	return &damaged{store: s, journal: journal, data: data, commits: commits, marks: marks}
}

func (d *damaged) with(t *testing.T, data []byte) (*Recovered, error) {
	t.Helper()
	must(t, os.WriteFile(d.journal, data, 0o600))
	return d.store.Read("a1")
}

// Cut anywhere in the last round, the journal recovers exactly the rounds
// before it.
func TestTruncatedAtEveryOffset(t *testing.T) {
	d := newDamaged(t)
	d.marks.at(t, 2)
	for cut := d.commits[1]; cut < int64(len(d.data)); cut++ {
		rec, err := d.with(t, d.data[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if rec.State.Round != 2 {
			t.Fatalf("cut at %d: recovered round %d, want 2", cut, rec.State.Round)
		}
	}
}

// Every single-bit flip before the last record is reported as corruption
// with the file and an offset; none is silently skipped.
func TestEveryBitFlipDetected(t *testing.T) {
	d := newDamaged(t)
	end := d.commits[1] // rounds 1 and 2, with round 3 after them
	for i := int64(0); i < end; i++ {
		for bit := 0; bit < 8; bit++ {
			data := append([]byte(nil), d.data...)
			data[i] ^= 1 << bit
			_, err := d.with(t, data)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.File != d.journal {
				t.Fatalf("flip of bit %d at byte %d: got %v, want a CorruptError naming the journal", bit, i, err)
			}
		}
	}
}

// A flip in the last record loses that round and no other.
func TestBitFlipInLastRecordDropsOnlyIt(t *testing.T) {
	d := newDamaged(t)
	d.marks.at(t, 2)
	data := append([]byte(nil), d.data...)
	data[len(data)-3] ^= 0x10
	rec, err := d.with(t, data)
	if err != nil || rec.State.Round != 2 {
		t.Fatalf("round %v, %v; want round 2", rec, err)
	}
}

// junkTail is bytes that may follow a log's last whole record: what a
// crash, or preallocated space, leaves there.
type junkTail struct {
	name string
	tail []byte
}

func junkTails() []junkTail {
	junk := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(junk)
	return []junkTail{
		{"zeros, as preallocation leaves", make([]byte, 64<<10)},
		{"random bytes", junk},
		{"a short header", []byte{0x05, 0x00}},
	}
}

func TestTails(t *testing.T) {
	for _, tt := range junkTails() {
		t.Run(tt.name, func(t *testing.T) {
			d := newDamaged(t)
			rec, err := d.with(t, append(append([]byte(nil), d.data...), tt.tail...))
			if err != nil || rec.State.Round != 3 {
				t.Fatalf("got %v, %v; want round 3", rec, err)
			}
			// Opening for write cuts the tail off; reading left it.
			lock, err := d.store.Lock("a1", ThisProcess("r"))
			must(t, err)
			defer lock.Unlock()
			_, log, err := d.store.Open("a1")
			must(t, err)
			commitRound(t, log, 4)
			log.Close()
			rec, err = d.store.Read("a1")
			if err != nil || rec.State.Round != 4 {
				t.Fatalf("after appending past the tail: %v, %v", rec, err)
			}
		})
	}
}

// A journal reserves its space on disk ahead of its records; the reserved
// zeros read as nothing, survive reopening, and are reserved again past a
// torn tail that opening cuts off.
func TestReservedSpace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("space is reserved with fallocate, on Linux only")
	}
	d := newDamaged(t)
	torn := append(append([]byte(nil), d.data...), d.data[d.commits[1]:d.commits[1]+5]...)
	_, err := d.with(t, torn)
	must(t, err)
	lock, err := d.store.Lock("a1", ThisProcess("r"))
	must(t, err)
	_, log, err := d.store.Open("a1")
	must(t, err)
	jl := log.(*journalLog)
	fi, err := os.Stat(d.journal)
	must(t, err)
	if jl.size != d.commits[2] || fi.Size() <= jl.size || jl.alloc != fi.Size() {
		t.Fatalf("after reopening: journal %d bytes, file %d, reserved %d; want %d bytes of records and more reserved",
			jl.size, fi.Size(), jl.alloc, d.commits[2])
	}
	jl.snapLen = 1 << 30 // no compaction: the test reads this journal back
	commitRound(t, log, 4)
	log.Close()
	lock.Unlock()
	rec, err := d.store.Read("a1")
	if err != nil || rec.State.Round != 4 || rec.JournalBytes <= d.commits[2] {
		t.Fatalf("read back: %+v, %v; want round 4", rec, err)
	}
	if fi, _ := os.Stat(d.journal); fi.Size() != jl.alloc {
		t.Fatalf("file is %d bytes, want the %d reserved", fi.Size(), jl.alloc)
	}
}

// A journal or snapshot from a newer schema is refused, and every file of
// the agent is left byte-for-byte as it was, even by Open.
func TestFutureSchemaRefusedAndUntouched(t *testing.T) {
	for _, which := range []string{"snapshot", "journal"} {
		t.Run(which, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := OpenFileStore(dir)
			newAgent(t, s, "a1", 2).Close()
			agentDir := filepath.Join(dir, "agents", "a1")
			snaps, _ := listRounds(agentDir, "snap-", ".cbor")
			newest := snaps[len(snaps)-1]
			name := snapName(newest)
			if which == "journal" {
				name = journalName(newest)
			}
			rewriteHeader(t, filepath.Join(agentDir, name), schemaVersion+1)
			// A torn tail too: Open must not truncate it either.
			f, _ := os.OpenFile(filepath.Join(agentDir, journalName(newest)), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte{1, 2, 3})
			f.Close()
			before := hashDir(t, agentDir)
			lock, err := s.Lock("a1", ThisProcess("r"))
			must(t, err)
			defer lock.Unlock()
			_, _, err = s.Open("a1")
			var fe *FutureSchemaError
			if !errors.As(err, &fe) || fe.Version != schemaVersion+1 || !errors.Is(err, ErrFutureSchema) {
				t.Fatalf("got %v, want a FutureSchemaError", err)
			}
			lock.Unlock()
			if after := hashDir(t, agentDir); !bytes.Equal(before, after) {
				t.Fatal("refusing a future schema changed the agent's files")
			}
		})
	}
}

// rewriteHeader replaces a file's header frame with one of another schema.
func rewriteHeader(t *testing.T, path string, schema int) {
	data, err := os.ReadFile(path)
	must(t, err)
	fr, _, err := frames(path, data)
	must(t, err)
	payload, _ := encodeRecord(Record{Type: RecHeader, Header: &Header{Schema: schema, Agent: "a1"}})
	out := appendFrame(nil, RecHeader, payload)
	if len(fr) > 1 {
		out = append(out, data[fr[1].off:]...)
	}
	must(t, os.WriteFile(path, out, 0o600))
}

// hashDir hashes every file of a directory but the lock, whose content is
// the holder and changes with every lock.
func hashDir(t *testing.T, dir string) []byte {
	entries, err := os.ReadDir(dir)
	must(t, err)
	h := sha256.New()
	for _, e := range entries {
		if e.Name() == "lock" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(t, err)
		h.Write([]byte(e.Name()))
		h.Write(b)
	}
	return h.Sum(nil)
}

func FuzzJournal(f *testing.F) {
	dir := f.TempDir()
	s, _ := OpenFileStore(dir)
	log := newAgent(f, s, "seed", 2)
	log.Close()
	seed, _ := os.ReadFile(filepath.Join(dir, "agents", "seed", journalName(0)))
	// Without its reserved space, zeros: the fuzzer mutates what is read.
	seed = seed[:len(seed)-len(allZeroTail(seed))]
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		agentDir := filepath.Join(dir, "agents", "seed")
		if err := os.WriteFile(filepath.Join(agentDir, journalName(0)), data, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := s.Read("seed")
		if err == nil && rec.State == nil {
			t.Fatal("no error and no state")
		}
	})
}

// A journal's frames are read up to its first damage, which is a torn tail
// or a *CorruptError; a torn tail, once cut off, stays cut off, and what
// is left holds no damage even when all of it is durable.
func FuzzJournalFrames(f *testing.F) {
	dir := f.TempDir()
	s, _ := OpenFileStore(dir)
	log := newAgent(f, s, "seed", 3)
	log.Close()
	seed, _ := os.ReadFile(filepath.Join(dir, "agents", "seed", journalName(0)))
	seed = seed[:len(seed)-len(allZeroTail(seed))]
	torn := append([]byte(nil), seed...)
	clear(torn[len(torn)/3 : len(torn)/2])
	for _, data := range [][]byte{seed, torn, seed[:len(seed)/2], {}} {
		f.Add(data, int64(0))
		f.Add(data, int64(len(data)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, durable int64) {
		fr, end, dropped, err := journalFrames("journal", data, durable)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Offset < 0 || ce.Offset > int64(len(data)) {
				t.Fatalf("got %v, want a CorruptError inside the journal", err)
			}
			return
		}
		if end > int64(len(data)) || (dropped && end < durable) {
			t.Fatalf("frames end at %d of %d (dropped %v, durable %d)", end, len(data), dropped, durable)
		}
		again, end2, dropped2, err := journalFrames("journal", data[:end], end)
		if err != nil || len(again) != len(fr) || end2 != end || dropped2 {
			t.Fatalf("the journal cut at %d reads %d frames to %d, %v, %v; want %d", end, len(again), end2, dropped2, err, len(fr))
		}
	})
}

// allZeroTail is the zeros that end b.
func allZeroTail(b []byte) []byte {
	i := len(b)
	for i > 0 && b[i-1] == 0 {
		i--
	}
	return b[i:]
}

func FuzzDecodeState(f *testing.F) {
	st := NewState("a", Definition{Workspace: "/w", Modules: map[string]string{"m": "sha256:00"}}, Labels{Tenant: "t"}, t0)
	st.Messages = []conversation.Message{{Role: conversation.RoleUser, Text: "hi"}}
	b, _ := encodeState(st)
	f.Add(b)
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState(data)
		if err != nil {
			return
		}
		again, err := encodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeState(again); err != nil {
			t.Fatalf("a decoded state does not decode after encoding: %v", err)
		}
	})
}

// framesFrom finds the frames at every offset that trying each offset in
// turn finds, though it passes over runs of zeros a word at a time.
func FuzzFramesFrom(f *testing.F) {
	one := appendFrame(nil, RecTurn, []byte("payload"))
	f.Add(append(append(make([]byte, 3), one...), make([]byte, 40)...), int64(0))
	f.Add(append(append(one, make([]byte, 17)...), one...), int64(1))
	f.Add(append(make([]byte, 64), 1), int64(5))
	f.Fuzz(func(t *testing.T, data []byte, start int64) {
		if start < 0 || start > int64(len(data)) {
			return
		}
		var want, got []int64
		for off := start; off+frameHeader < int64(len(data)); off++ {
			if _, _, ok := frameAt(data, off); ok {
				want = append(want, off)
			}
		}
		framesFrom(data, start, func(f frame, _ int64) bool {
			got = append(got, f.off)
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("framesFrom found frames at %v, every offset in turn at %v", got, want)
		}
	})
}
