package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// checkAgent is an agent of a store for Check to judge: three rounds and a
// fourth interrupted, compacted or not, its files the test damages.
type checkAgent struct {
	store *FileStore
	dir   string // the agent's directory
	base  int    // the newest snapshot's round
}

func newCheckAgent(t *testing.T, compact bool) *checkAgent {
	t.Helper()
	var opts []FileStoreOption
	if compact {
		opts = append(opts, WithCompactAfter(0))
	}
	s, err := OpenFileStore(t.TempDir(), opts...)
	must(t, err)
	log := newAgent(t, s, "a1", 3)
	must(t, log.Append(roundRecords(4)[:2]...))
	must(t, log.Close())
	a := &checkAgent{store: s, dir: filepath.Join(s.Dir(), "agents", "a1")}
	snaps, err := listRounds(a.dir, "snap-", ".cbor")
	must(t, err)
	a.base = snaps[len(snaps)-1]
	if compact != (a.base > 0) {
		t.Fatalf("snapshots %v: want compacted %v", snaps, compact)
	}
	return a
}

func (a *checkAgent) snapshot() string { return filepath.Join(a.dir, snapName(a.base)) }
func (a *checkAgent) journal() string  { return filepath.Join(a.dir, journalName(a.base)) }

// edit replaces a file of the agent with what fn makes of its bytes; fn
// returning nil removes it.
func (a *checkAgent) edit(t *testing.T, name string, fn func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(name)
	must(t, err)
	if data = fn(data); data == nil {
		must(t, os.Remove(name))
		return
	}
	must(t, os.WriteFile(name, data, 0o600))
}

// agrees fails unless Check says what Read says: nil for nil, else the
// same words.
func (a *checkAgent) agrees(t *testing.T) error {
	t.Helper()
	checked := a.store.Check("a1")
	_, read := a.store.Read("a1")
	if fmt.Sprint(checked) != fmt.Sprint(read) {
		t.Fatalf("Check: %v\nRead:  %v", checked, read)
	}
	return checked
}

// journalEnd is where the journal's frames end, before its reserved zeros.
func journalEnd(data []byte) int {
	_, end, _ := split(data)
	return int(end)
}

// Check reads a clean agent on its own, without Read: compacted or not,
// with a round interrupted, with its journal's reserved zeros, with no
// journal yet or an empty one; where Read reads an agent Check does not
// find clean (a torn tail, extra bytes), it says nil too.
func TestCheckFindsCleanAgents(t *testing.T) {
	for _, tt := range []struct {
		name    string
		compact bool
		damage  func(*checkAgent, *testing.T)
		clean   bool
	}{
		{"three rounds", false, func(*checkAgent, *testing.T) {}, true},
		{"compacted", true, func(*checkAgent, *testing.T) {}, true},
		{"no reserved zeros", false, func(a *checkAgent, t *testing.T) {
			a.edit(t, a.journal(), func(d []byte) []byte { return d[:journalEnd(d)] })
		}, true},
		{"a torn tail", false, func(a *checkAgent, t *testing.T) {
			a.edit(t, a.journal(), func(d []byte) []byte { return append(d[:journalEnd(d)], 7, 0, 0) })
		}, false},
		{"the last record cut short", false, func(a *checkAgent, t *testing.T) {
			a.edit(t, a.journal(), func(d []byte) []byte { return d[:journalEnd(d)-3] })
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newCheckAgent(t, tt.compact)
			tt.damage(a, t)
			if err := a.agrees(t); err != nil {
				t.Fatal(err)
			}
			if got := a.store.clean("a1", a.dir); got != tt.clean {
				t.Fatalf("clean: %v, want %v", got, tt.clean)
			}
		})
	}
	t.Run("no journal", func(t *testing.T) {
		s, err := OpenFileStore(t.TempDir())
		must(t, err)
		lock, err := s.Lock("a1", ThisProcess("r"))
		must(t, err)
		defer lock.Unlock()
		dir := filepath.Join(s.Dir(), "agents", "a1")
		must(t, os.MkdirAll(dir, 0o700))
		_, err = writeSnapshot(dir, NewState("a1", Definition{}, Labels{}, t0))
		must(t, err)
		if err := s.Check("a1"); err != nil || !s.clean("a1", dir) {
			t.Fatalf("Check: %v, clean %v; want nil and clean", err, s.clean("a1", dir))
		}
	})
}

// Regression: the events of an agent Read refuses were served by the
// web server, which read the history alone. Check refuses every such
// agent with Read's words: damage to the snapshot's state (the bytes the
// reviewer overwrote) or header, a newer schema, a journal damaged
// below its commit or cut below its commit mark, a newest snapshot or
// journal missing.
func TestCheckRefusesWhatReadRefuses(t *testing.T) {
	overwrite := func(off, n int) func([]byte) []byte {
		return func(d []byte) []byte {
			for i := off; i < min(off+n, len(d)); i++ {
				d[i] = 0xaa
			}
			return d
		}
	}
	flipCommitted := func(d []byte) []byte {
		fr, _, _ := split(d)
		d[fr[2].off+frameHeader] ^= 0x40 // a record that a commit follows
		return d
	}
	for _, tt := range []struct {
		name    string
		compact bool
		file    func(*checkAgent) string
		damage  func([]byte) []byte
		want    string
	}{
		{"snapshot state overwritten", false, (*checkAgent).snapshot, overwrite(60, 200), "is corrupt at offset"},
		{"compacted snapshot overwritten", true, (*checkAgent).snapshot, overwrite(60, 200), "is corrupt at offset"},
		{"snapshot header overwritten", false, (*checkAgent).snapshot, overwrite(2, 4), "is corrupt at offset"},
		{"snapshot cut short", false, (*checkAgent).snapshot, func(d []byte) []byte { return d[:len(d)-1] }, "is corrupt at offset"},
		{"snapshot with bytes after it", false, (*checkAgent).snapshot, func(d []byte) []byte { return append(d, 1) }, "is corrupt at offset"},
		{"snapshot missing", true, (*checkAgent).snapshot, func([]byte) []byte { return nil }, "lost committed data"},
		{"journal damaged below a commit", false, (*checkAgent).journal, flipCommitted, "is corrupt at offset"},
		{"journal cut below its mark", false, (*checkAgent).journal, func(d []byte) []byte {
			fr, _, _ := split(d)
			return d[:fr[3].off]
		}, "lost committed data"},
		{"journal missing", false, (*checkAgent).journal, func([]byte) []byte { return nil }, "lost committed data"},
		{"journal of a newer schema", false, (*checkAgent).journal, func(d []byte) []byte {
			fr, _, _ := split(d)
			payload, _ := encodeRecord(Record{Type: RecHeader, Header: &Header{Schema: schemaVersion + 1, Agent: "a1"}})
			return append(appendFrame(nil, RecHeader, payload), d[fr[1].off:]...)
		}, "has schema version"},
		{"snapshot of a newer schema", false, (*checkAgent).snapshot, func(d []byte) []byte {
			fr, _, _ := split(d)
			payload, _ := encodeRecord(Record{Type: RecHeader, Header: &Header{Schema: schemaVersion + 1, Agent: "a1"}})
			return append(appendFrame(nil, RecHeader, payload), d[fr[1].off:]...)
		}, "has schema version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newCheckAgent(t, tt.compact)
			a.edit(t, tt.file(a), tt.damage)
			if err := a.agrees(t); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check: %v; want a refusal saying %q", err, tt.want)
			}
		})
	}
}

// Check's memory does not grow with the state: an agent of an 8 MiB
// state costs it what one of a few messages does, to within 256 KiB,
// where Read of it costs the state.
func TestCheckCostDoesNotGrowWithState(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	must(t, err)
	for id, n := range map[string]int{"small": 1, "big": 2048} {
		lock, err := s.Lock(id, ThisProcess("r"))
		must(t, err)
		st := NewState(id, Definition{}, Labels{}, t0)
		for range n {
			st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleUser, Text: strings.Repeat("x", 4<<10)})
		}
		log, err := s.Create(id, st)
		must(t, err)
		commitRound(t, log, 1)
		must(t, log.Close())
		lock.Unlock()
	}
	cost := func(fn func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range 5 {
			fn()
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 5
	}
	check := func(id string) func() {
		return func() {
			if err := s.Check(id); err != nil {
				t.Fatal(err)
			}
		}
	}
	small, big := cost(check("small")), cost(check("big"))
	read := cost(func() { s.Read("big") })
	t.Logf("bytes allocated: Check of a 4 KiB state %d, of an 8 MiB state %d; Read of it %d", small, big, read)
	if big > small+256<<10 || read < 8<<20 {
		t.Fatalf("Check allocated %d bytes for an 8 MiB state, %d for a 4 KiB one (Read %d): it decodes the state", big, small, read)
	}
}

// FuzzAgentCheck damages an agent's snapshot or journal with any bytes at any
// offset: Check says what Read says, nil or the same words.
func FuzzAgentCheck(f *testing.F) {
	f.Add(false, uint16(60), []byte{0xaa, 0xaa})
	f.Add(true, uint16(30), []byte{0})
	f.Add(true, uint16(200), []byte{0, 0, 0, 0})
	f.Add(false, uint16(0), []byte{9})
	f.Fuzz(func(t *testing.T, journal bool, off uint16, b []byte) {
		a := newCheckAgent(t, false)
		name := a.snapshot()
		if journal {
			name = a.journal()
		}
		a.edit(t, name, func(d []byte) []byte {
			at := int(off) % (len(d) + 1)
			return append(d[:at:at], append(b, d[min(at+len(b), len(d)):]...)...)
		})
		a.agrees(t)
	})
}
