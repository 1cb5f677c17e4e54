package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pastRounds is how many rounds tornPasts commits: past the second index
// entry (round 32), so that an entry can name a frame after the damage.
const pastRounds = 40

// tornPasts is agent a1 of a FileStore with rounds 1 to pastRounds
// committed and a past kept after each, as the host keeps them: a whole
// workspace at round 0, then each round's changes. The past file and its
// index are never synced: the test then plays what a power cut may leave
// of them.
type tornPasts struct {
	dir, past, index string
	written, indexed []byte   // the past file and its index as the page cache held them
	versions         [][]byte // the past file after each PutPast
	ends             []int64  // where the past of round r ends in written
}

func newTornPasts(t *testing.T) *tornPasts {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	log := newAgent(t, s, "a1", 0)
	a := &tornPasts{dir: dir, past: filepath.Join(dir, "agents", "a1", pastFile)}
	a.index = indexOf(a.past)
	put := func(p Past) {
		t.Helper()
		must(t, s.PutPast("a1", p))
		data, err := os.ReadFile(a.past)
		must(t, err)
		a.versions = append(a.versions, data)
		a.ends = append(a.ends, int64(len(data)))
	}
	p, err := NewPast(log.State(), nil)
	must(t, err)
	p.Base = putManifest(t, s, nil)
	put(p)
	for r := 1; r <= pastRounds; r++ {
		commitRound(t, log, r)
		p, err := NewPast(log.State(), roundChanges(t, s, r))
		must(t, err)
		put(p)
	}
	must(t, log.Close())
	a.written = a.versions[len(a.versions)-1]
	a.indexed, err = os.ReadFile(a.index)
	must(t, err)
	if n := len(pagesBefore(0, int64(len(a.written)))); n < 3 {
		t.Fatalf("the past file spans %d pages: the test needs more", n+1)
	}
	return a
}

// roundChanges are three files round r wrote, their contents in s.
func roundChanges(t *testing.T, s *FileStore, r int) []WorkspaceEntry {
	var out []WorkspaceEntry
	for i := range 3 {
		content := fmt.Sprintf("file %d of round %d\n", i, r)
		digest, err := s.PutBlob([]byte(content))
		must(t, err)
		out = append(out, WorkspaceEntry{Path: fmt.Sprintf("src/round-%03d/%s-%d.txt", r, strings.Repeat("long-name", 6), i),
			Digest: digest, Size: int64(len(content)), Mode: 0o644})
	}
	return out
}

// putManifest keeps a workspace manifest of entries in s.
func putManifest(t *testing.T, s *FileStore, entries []WorkspaceEntry) string {
	m, err := EncodeManifest(entries)
	must(t, err)
	digest, err := s.PutBlob(m)
	must(t, err)
	return digest
}

// damage is what a power cut left of the past file and its index.
type damage struct {
	name        string
	past, index []byte // nil index: none on disk
	kept        int    // how many pasts, from round 0, survive
}

// damages are what a power cut may leave of a's past file: any page back
// to zeros or to what an earlier write-back left in it, with the pages
// after it kept; the last frame cut short; and, with a page lost before
// the second indexed round, an index whose entries name frames that are
// now in the dropped tail, or that is itself torn, garbled or lost.
func (a *tornPasts) damages() []damage {
	var out []damage
	size := int64(len(a.written))
	for p := int64(0); p*pageSize < size; p++ {
		out = append(out, a.damaged(fmt.Sprintf("page %d zeroed", p), revertPage(a.written, 0, p), a.indexed))
		if older := a.olderPage(p); older != nil {
			out = append(out, a.damaged(fmt.Sprintf("page %d older", p), older, a.indexed))
		}
	}
	out = append(out, a.damaged("last frame cut short", a.written[:size-5], a.indexed))
	early := revertPage(a.written, 0, (a.ends[10]+1)/pageSize)
	garbled := append([]byte(nil), a.indexed...)
	garbled[len(garbled)-3] ^= 0xff
	out = append(out,
		a.damaged("page lost before an indexed frame", early, a.indexed),
		a.damaged("index torn", early, a.indexed[:len(a.indexed)-pastIndexEntry/2]),
		a.damaged("index garbled", early, garbled),
		a.damaged("index lost", early, nil),
		a.damaged("index names frames past the file", a.written[:a.ends[20]], a.indexed))
	return out
}

// olderPage is the past file with page p as a write-back left it when the
// file ended inside it (the bytes then, zeros after), or nil when no
// write ended inside p.
func (a *tornPasts) olderPage(p int64) []byte {
	for i := len(a.versions) - 1; i >= 0; i-- {
		v := a.versions[i]
		if end := int64(len(v)); end > p*pageSize && end < (p+1)*pageSize && end < int64(len(a.written)) {
			out := append([]byte(nil), a.written...)
			to := min((p+1)*pageSize, int64(len(out)))
			copy(out[p*pageSize:to], append(v[p*pageSize:], make([]byte, to-end)...))
			return out
		}
	}
	return nil
}

// damaged is a damage whose kept pasts are those whose frames end before
// the first byte past differs from what was written.
func (a *tornPasts) damaged(name string, past, index []byte) damage {
	first := int64(len(past))
	for i := range past {
		if past[i] != a.written[i] {
			first = int64(i)
			break
		}
	}
	kept := 0
	for kept < len(a.ends) && a.ends[kept] <= first {
		kept++
	}
	return damage{name: name, past: past, index: index, kept: kept}
}

// leave writes d's files, as the power cut left them.
func (a *tornPasts) leave(t *testing.T, d damage) {
	t.Helper()
	must(t, os.WriteFile(a.past, d.past, 0o600))
	if d.index == nil {
		must(t, os.Remove(a.index))
	} else {
		must(t, os.WriteFile(a.index, d.index, 0o600))
	}
}

// restore leaves d's files, and opens the store and locks a1 as the next
// process does.
func (a *tornPasts) restore(t *testing.T, d damage) *FileStore {
	t.Helper()
	a.leave(t, d)
	s, err := OpenFileStore(a.dir)
	must(t, err)
	lock, err := s.Lock("a1", ThisProcess("run-2"))
	must(t, err)
	t.Cleanup(func() { lock.Unlock() })
	return s
}

// wantPasts checks that s has the pasts of rounds 0 to kept-1, and then
// those of the rounds in more, and that the newest is the last of them.
func wantPasts(t *testing.T, s *FileStore, kept int, more ...int) {
	t.Helper()
	want := make([]int, 0, kept+len(more))
	for r := range kept {
		want = append(want, r)
	}
	want = append(want, more...)
	pasts, err := s.Pasts("a1")
	got := make([]int, len(pasts))
	for i, p := range pasts {
		got[i] = p.Round
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pasts of rounds %v (%v), want %v", got, err, want)
	}
	p, ok, err := s.NewestPast("a1")
	switch {
	case err != nil:
		t.Errorf("newest past: %v", err)
	case len(want) == 0 && ok:
		t.Errorf("newest past: round %d, want none", p.Round)
	case len(want) > 0 && (!ok || p.Round != want[len(want)-1]):
		t.Errorf("newest past: round %d (%v), want %d", p.Round, ok, want[len(want)-1])
	}
}

// The past file is never synced, so a power cut may keep a later page of
// it and lose an earlier one. Pasts, NewestPast and the next PutPast
// refused such a file as corrupt, and the host's next round failed with
// it, although the journal was whole. Now the damage and every frame
// after it are a torn tail: the pasts before it are read, the newest of
// them is the newest past, the next PutPast cuts the tail away and
// appends after it, and the dropped frames do not come back.
func TestTornPastFileDoesNotFailTheRound(t *testing.T) {
	a := newTornPasts(t)
	for _, d := range a.damages() {
		t.Run(d.name, func(t *testing.T) {
			s := a.restore(t, d)
			reader, err := OpenFileStore(a.dir) // holds no lock, and cuts nothing
			must(t, err)
			wantPasts(t, reader, d.kept)
			wantPasts(t, s, d.kept)
			if d.kept == len(a.ends) {
				t.Fatalf("%s: no past was lost", d.name)
			}
			// The next run keeps the whole workspace at its boundary, as
			// its newest past is older than it.
			p := Past{Round: pastRounds, Messages: 1, State: &State{Agent: "a1", Round: pastRounds}, Base: putManifest(t, s, nil)}
			if err := s.PutPast("a1", p); err != nil {
				t.Fatalf("the next PutPast, which keeps the next run's base: %v", err)
			}
			wantPasts(t, s, d.kept, pastRounds)
			keptEnd := int64(0)
			if d.kept > 0 {
				keptEnd = a.ends[d.kept-1]
			}
			data, err := os.ReadFile(a.past)
			must(t, err)
			if !bytes.Equal(data[:keptEnd], a.written[:keptEnd]) {
				t.Fatal("the pasts before the damage were changed")
			}
			if fs, end, why := split(data[keptEnd:]); why != "" || len(fs) != 1 || end != int64(len(data))-keptEnd {
				t.Fatalf("after the cut: %d frames up to %d of %d bytes (%s), want the new past alone", len(fs), end, len(data)-int(keptEnd), why)
			}
			s2, err := OpenFileStore(a.dir)
			must(t, err)
			wantPasts(t, s2, d.kept, pastRounds)
		})
	}
}

// Collect marks the blobs an agent's pasts name; it failed on a torn past
// file, and so removed nothing of any agent. Now it reads the pasts that
// survived.
func TestTornPastFileDoesNotFailCollect(t *testing.T) {
	a := newTornPasts(t)
	d := a.damaged("page 1 zeroed", revertPage(a.written, 0, 1), a.indexed)
	a.leave(t, d)
	s, err := OpenFileStore(a.dir)
	must(t, err)
	c, err := s.Collect(Retention{DryRun: true})
	if err != nil || len(c.Unreadable) != 0 || c.BlobsKept != "" {
		t.Fatalf("collect: %+v, %v", c, err)
	}
}
