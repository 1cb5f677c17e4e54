package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pastAgent is an agent "a" of a new FileStore, locked, whose pasts the
// test puts: put(round, messages) keeps a past of that round whose
// conversation held that many messages.
type pastAgent struct {
	s    *FileStore
	name string // its past file
	put  func(round, messages int)
}

func newPastAgent(t *testing.T) *pastAgent {
	t.Helper()
	s, err := OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lock, err := s.Lock("a", ThisProcess("r"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Unlock() })
	log, err := s.Create("a", NewState("a", Definition{}, Labels{}, time.Unix(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	a := &pastAgent{s: s, name: filepath.Join(s.Dir(), "agents", "a", pastFile)}
	a.put = func(round, messages int) {
		t.Helper()
		p, err := NewPast(log.State(), nil)
		if err == nil {
			p.Round, p.Messages = round, messages
			err = s.PutPast("a", p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// reopen forgets the past file this store holds open and has checked, as
// a new process that takes the agent's lock has.
func (a *pastAgent) reopen() {
	a.s.pastsChecked.Delete("a")
	a.s.mu.Lock()
	a.s.closePast(a.s.held["a"])
	a.s.mu.Unlock()
}

func (a *pastAgent) wantNewest(t *testing.T, what string, round, messages int) {
	t.Helper()
	p, ok, err := a.s.NewestPast("a")
	if err != nil || !ok || p.Round != round || p.Messages != messages {
		t.Fatalf("%s: newest past round %d, %d messages (%v, %v), want round %d, %d messages",
			what, p.Round, p.Messages, ok, err, round, messages)
	}
}

// NewestPast decodes the past file from the frame its index names last:
// the first past, whose frame is whole but whose payload does not decode,
// so that Pasts refuses the file, is not decoded, and neither is it by the
// cut of a torn tail that the next PutPast makes.
func TestNewestPastReadsOnlyTheTail(t *testing.T) {
	a := newPastAgent(t)
	for r := range 100 {
		a.put(r, 2*r)
	}
	a.wantNewest(t, "whole file", 99, 198)
	data, err := os.ReadFile(a.name)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(data[0:4])
	copy(data, appendFrame(nil, pastFrame, bytes.Repeat([]byte{0xff}, int(n)))) // the first past
	if err := os.WriteFile(a.name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if _, err := a.s.Pasts("a"); !errors.As(err, &ce) {
		t.Fatalf("Pasts of a file whose first past does not decode: %v, want a *CorruptError", err)
	}
	a.wantNewest(t, "undecodable at its start", 99, 198)
	f, _ := os.OpenFile(a.name, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{40, 0, 0, 0, byte(pastFrame), 1, 2}) // torn
	f.Close()
	a.wantNewest(t, "with a torn tail", 99, 198)
	a.reopen()
	a.put(100, 200)
	a.wantNewest(t, "after the cut", 100, 200)
}

// A store written without the index (an older cairn) has its newest past
// read from the start of the file; so has one whose index is junk.
func TestNewestPastWithoutIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		index func(name string) error
	}{
		{"none", os.Remove},
		{"junk", func(name string) error { return os.WriteFile(name, make([]byte, 5*pastIndexEntry+3), 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newPastAgent(t)
			for r := range 70 {
				a.put(r, r)
			}
			if err := tc.index(indexOf(a.name)); err != nil {
				t.Fatal(err)
			}
			a.wantNewest(t, "no index", 69, 69)
			a.reopen()
			a.put(70, 70)
			a.wantNewest(t, "one more", 70, 70)
			pasts, err := a.s.Pasts("a")
			if err != nil || len(pasts) != 71 {
				t.Fatalf("pasts: %d, %v", len(pasts), err)
			}
		})
	}
}

// An index entry whose frame was lost (the past file's tail cut, as a
// power cut may leave it, and other pasts written where it was) is not
// trusted: the newest past is the one written last, not what the entry
// named.
func TestNewestPastStaleIndex(t *testing.T) {
	a := newPastAgent(t)
	for r := range 65 {
		a.put(r, r)
	}
	entries := pastIndexes(indexOf(a.name))
	if len(entries) != 3 || entries[0].round != 64 {
		t.Fatalf("index entries: %+v, want rounds 64, 32 and 0", entries)
	}
	if err := os.Truncate(a.name, entries[0].off); err != nil { // round 64 lost
		t.Fatal(err)
	}
	a.reopen()
	a.put(64, 1000) // where the lost one was, with other bytes
	a.wantNewest(t, "after the loss", 64, 1000)
	if err := os.Truncate(a.name, entries[0].off+frameHeader+3); err != nil { // round 64 torn
		t.Fatal(err)
	}
	a.wantNewest(t, "torn where the entry points", 63, 63)
}

// An index entry torn by a crash is written over by the next one, so the
// entries after it stay whole.
func TestPastIndexTornEntry(t *testing.T) {
	a := newPastAgent(t)
	for r := range 33 {
		a.put(r, r)
	}
	f, _ := os.OpenFile(indexOf(a.name), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{1, 2, 3, 4, 5})
	f.Close()
	for r := 33; r <= 64; r++ {
		a.put(r, r)
	}
	entries := pastIndexes(indexOf(a.name))
	if len(entries) != 3 || entries[0].round != 64 || entries[1].round != 32 {
		t.Fatalf("index entries: %+v, want rounds 64, 32 and 0", entries)
	}
	fi, err := os.Stat(indexOf(a.name))
	if err != nil || fi.Size() != 3*pastIndexEntry {
		t.Fatalf("index file: %v, %v", fi.Size(), err)
	}
}

// FuzzReadPastTail reads a past file and its index from arbitrary bytes,
// after zeroing tornLen of its bytes from tornAt, as a power cut may leave
// a page of it with later ones kept. It must not panic or fail: whatever
// the index says, the tail ends at the file's first damage and its frames
// are the last of those before it; the frames that ended before the
// zeroed bytes are kept; with no index, the newest past is the one the
// whole file's frames hold; and the next writer's cut leaves exactly the
// frames before the damage.
func FuzzReadPastTail(f *testing.F) {
	past := appendFrame(nil, pastFrame, []byte{0xa1, 0x01, 0x05})
	past = appendFrame(past, pastFrame, []byte{0xa1, 0x01, 0x06})
	second := int64(len(past)) / 2
	past = appendFrame(past, pastFrame, []byte{0xa1, 0x01, 0x07})
	f.Add(past, pastIndex{off: second, round: 6, crc: 1}.encode(), uint32(0), uint16(0))
	f.Add(past, []byte{}, uint32(0), uint16(0))
	f.Add(past, pastIndex{off: second * 2, round: 7, crc: binary.LittleEndian.Uint32(past[second*2+5:])}.encode(), uint32(second+2), uint16(3))
	f.Add(past, []byte{}, uint32(2), uint16(1))
	f.Fuzz(func(t *testing.T, past, index []byte, tornAt uint32, tornLen uint16) {
		whole, _ := unsyncedFrames(past)
		past = append([]byte(nil), past...)
		if n := len(past); n > 0 && tornLen > 0 {
			at := int(tornAt % uint32(n))
			clear(past[at:min(n, at+int(tornLen))])
		}
		dir := t.TempDir()
		name := filepath.Join(dir, pastFile)
		if err := os.WriteFile(name, past, 0o600); err != nil {
			t.Fatal(err)
		}
		if len(index) > 0 {
			if err := os.WriteFile(indexOf(name), index, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		tail, err := readPastTail(name)
		if err != nil {
			t.Fatalf("readPastTail: %v", err)
		}
		fs, end := unsyncedFrames(past)
		if tail.end != end || tail.size != int64(len(past)) || tail.start > tail.end {
			t.Fatalf("tail from %d to %d of %d bytes, want it to end at %d", tail.start, tail.end, tail.size, end)
		}
		if k := len(tail.frames); k > len(fs) || (k > 0 && (tail.frames[0].off != tail.start || tail.frames[k-1].off != fs[len(fs)-1].off)) {
			t.Fatalf("the tail's %d frames from %d are not the last of the file's %d", k, tail.start, len(fs))
		}
		for i, f := range whole {
			if f.off+frameHeader+int64(len(f.payload)) <= int64(tornAt%uint32(max(1, len(past)))) && (i >= len(fs) || fs[i].off != f.off) {
				t.Fatalf("frame %d at %d, before the damage, was dropped", i, f.off)
			}
		}
		got, gotOK, gerr := newestOf("a", name, tail.frames)
		if len(index) == 0 {
			want, wantOK, werr := newestOf("a", name, fs)
			if (werr == nil) != (gerr == nil) || wantOK != gotOK || want.Round != got.Round {
				t.Fatalf("newest past from the tail: round %d (%v, %v); from the whole file: round %d (%v, %v)",
					got.Round, gotOK, gerr, want.Round, wantOK, werr)
			}
		}
		if err := cutTornPast(name); err != nil {
			t.Fatalf("cut: %v", err)
		}
		cut, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(cut, past[:end]) {
			t.Fatalf("after the cut: %d bytes (%v), want the %d before the damage", len(cut), err, end)
		}
		after, err := readCutTail(name)
		if err != nil || after.end != end || len(after.frames) != len(tail.frames) || after.start != tail.start {
			t.Fatalf("after the cut, the tail from %d to %d (%d frames, %v); before it, from %d to %d (%d frames)",
				after.start, after.end, len(after.frames), err, tail.start, tail.end, len(tail.frames))
		}
	})
}

// A past whose frame was written is kept even when its index entry cannot
// be: the index only shortens reads, so a failure to write it (here the
// index's name taken by a directory) fails no PutPast, and so no round.
func TestPastIndexWriteFailureFailsThePut(t *testing.T) {
	a := newPastAgent(t)
	if err := os.Mkdir(indexOf(a.name), 0o700); err != nil {
		t.Fatal(err)
	}
	for r := range 34 {
		a.put(r, r) // rounds 0 and 32 are indexed
	}
	a.wantNewest(t, "without an index", 33, 33)
	a.reopen()
	a.put(34, 34)
	a.wantNewest(t, "after a new writer", 34, 34)
}
