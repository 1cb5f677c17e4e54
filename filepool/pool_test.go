package filepool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

func TestSawRecordsWhatTheWorkspaceHolds(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "notes.md", "hello")
	e, err := p.Saw(context.Background(), "./notes.md", 3, "c7", OpRead)
	if err != nil {
		t.Fatal(err)
	}
	want := Entry{Path: "notes.md", Exists: true, Hash: HashBytes([]byte("hello")).Hash, Size: 5,
		Round: 3, Call: "c7", Op: OpRead}
	if e != want {
		t.Fatalf("Saw = %+v, want %+v", e, want)
	}
	if got, ok := p.Lookup("notes.md"); !ok || got != want {
		t.Fatalf("Lookup = %+v, %v", got, ok)
	}
	// A tool that looked for a file and found none tracks its absence.
	e, err = p.Saw(context.Background(), "later/todo.md", 3, "c8", OpRead)
	if err != nil || e.Exists || e.Hash != (Hash{}) {
		t.Fatalf("Saw of a missing file = %+v, %v", e, err)
	}
	if p.Len() != 2 {
		t.Fatalf("Len = %d, want 2", p.Len())
	}
}

func TestSawRefuses(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "sub/a.txt", "a")
	ctx := context.Background()
	for _, tc := range []struct {
		path string
		op   Op
		want error
	}{
		{"../outside", OpRead, ErrBadPath},
		{"/etc/passwd", OpRead, ErrBadPath},
		{"sub", OpRead, ErrUnreadable},
		{"missing.txt", OpWrite, nil}, // a write must leave a file
	} {
		_, err := p.Saw(ctx, tc.path, 1, "c1", tc.op)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("Saw(%q, %s) = %v, want %v", tc.path, tc.op, err, tc.want)
		}
	}
	if p.Len() != 0 {
		t.Fatalf("refused sightings were tracked: %+v", p.State())
	}
}

func TestRecordNormalises(t *testing.T) {
	p, _ := newPool(t, State{}, Config{})
	e, err := p.Record(Entry{Path: "a//b.txt", Hash: Hash{1}, Size: 9, Round: 2, Call: "c1", Op: OpDelete, Outside: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Entry{Path: "a/b.txt", Round: 2, Call: "c1", Op: OpDelete}); e != want {
		t.Fatalf("Record = %+v, want %+v", e, want)
	}
	for _, bad := range []Entry{
		{Path: "x", Op: "rename"},
		{Path: "x", Op: OpWrite},
		{Path: "x", Op: OpDelete, Exists: true},
		{Path: "x", Op: OpRead, Exists: true, Size: -1},
		{Path: "../x", Op: OpRead},
	} {
		if _, err := p.Record(bad); err == nil {
			t.Errorf("Record(%+v) succeeded", bad)
		}
	}
}

// TestStateRoundTrip checks that the checkpointed value survives CBOR as the
// checkpoint package encodes it, integer keys and all, and rebuilds the pool.
func TestStateRoundTrip(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "b.txt", "bee")
	writeFile(t, dir, "a/c.txt", "sea")
	saw(t, p, "b.txt")
	saw(t, p, "a/c.txt")
	saw(t, p, "gone.txt")
	if _, err := p.Record(Entry{Path: "d.txt", Exists: true, Hash: Hash{0xd}, Size: 4, Round: 2, Call: "c2", Op: OpWrite}); err != nil {
		t.Fatal(err)
	}
	st := p.State()
	if len(st.Entries) != 4 || st.Entries[0].Path != "a/c.txt" || st.Entries[3].Path != "gone.txt" {
		t.Fatalf("State is not sorted by path: %+v", st.Entries)
	}
	em, err := cbor.CoreDetEncOptions().EncMode()
	if err != nil {
		t.Fatal(err)
	}
	b, err := em.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var got State
	if err := cbor.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, st)
	}
	// Integer keys, and the absent file's empty fields left out.
	var raw map[int][]map[int]any
	if err := cbor.Unmarshal(b, &raw); err != nil {
		t.Fatalf("not integer-keyed: %v", err)
	}
	gone := raw[1][3]
	if _, ok := gone[2]; ok || len(gone) != 5 { // path, hash, round, call, op
		t.Fatalf("absent entry encodes as %v", gone)
	}
	again, err := New(dir, got, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !reflect.DeepEqual(again.State(), st) {
		t.Fatalf("pool rebuilt from the state differs:\n got %+v\nwant %+v", again.State(), st)
	}
	if b2, _ := em.Marshal(again.State()); string(b2) != string(b) {
		t.Fatal("the same record encodes to different bytes")
	}
}

func TestNewRefusesBadState(t *testing.T) {
	dir := t.TempDir()
	for name, st := range map[string]State{
		"escaping path": {Entries: []Entry{{Path: "../x", Op: OpRead}}},
		"absolute path": {Entries: []Entry{{Path: "/x", Op: OpRead}}},
		"duplicate":     {Entries: []Entry{{Path: "x", Op: OpRead}, {Path: "./x", Op: OpRead}}},
		"unknown op":    {Entries: []Entry{{Path: "x", Op: "move"}}},
	} {
		if p, err := New(dir, st, Config{}); err == nil {
			p.Close()
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := New(filepath.Join(dir, "missing"), State{}, Config{}); err == nil {
		t.Error("New on a missing workspace succeeded")
	}
	if _, err := New(dir, State{}, Config{MaxEntries: -1}); err == nil {
		t.Error("New with a negative bound succeeded")
	}
}

func TestEvictsOldestRounds(t *testing.T) {
	p, _ := newPool(t, State{}, Config{MaxEntries: 3})
	rec := func(path string, round int) {
		t.Helper()
		if _, err := p.Record(Entry{Path: path, Round: round, Op: OpRead}); err != nil {
			t.Fatal(err)
		}
	}
	rec("a", 1)
	rec("b", 2)
	rec("c", 3)
	rec("a", 4) // seen again: now the newest
	rec("d", 5)
	if _, ok := p.Lookup("b"); ok || p.Len() != 3 {
		t.Fatalf("want b evicted and 3 left, have %+v", p.State())
	}
	// A state larger than the bound is cut down on load, oldest first.
	p2, err := New(t.TempDir(), State{Entries: []Entry{{Path: "x", Round: 9, Op: OpRead},
		{Path: "y", Round: 1, Op: OpRead}, {Path: "z", Round: 5, Op: OpRead}}}, Config{MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if _, ok := p2.Lookup("y"); ok || p2.Len() != 2 {
		t.Fatalf("want y evicted on load, have %+v", p2.State())
	}
}

func TestClosedPool(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "a", "a")
	saw(t, p, "a")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Saw(ctx, "a", 2, "c", OpRead); !errors.Is(err, ErrClosed) {
		t.Errorf("Saw: %v", err)
	}
	if _, err := p.Reconcile(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Reconcile: %v", err)
	}
	if err := p.CheckBase(ctx, "a", Version{}); !errors.Is(err, ErrClosed) {
		t.Errorf("CheckBase: %v", err)
	}
	if _, err := p.Watch(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Watch: %v", err)
	}
	if _, ok := p.Lookup("a"); !ok || len(p.State().Entries) != 1 {
		t.Error("the record is not readable after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestConcurrentUse runs every entry point at once; run it with -race.
func TestConcurrentUse(t *testing.T) {
	p, dir := newPool(t, State{}, Config{MaxEntries: 16})
	ctx := context.Background()
	w, err := p.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 30 {
				name := fmt.Sprintf("d%d/f%d.txt", g, i%20)
				writeFile(t, dir, name, fmt.Sprint(i))
				if _, err := p.Saw(ctx, name, i, fmt.Sprint("c", g), OpRead); err != nil {
					t.Error(err)
				}
				p.Lookup(name)
				p.State()
				if _, err := p.Reconcile(ctx); err != nil {
					t.Error(err)
				}
				if _, err := w.Drain(ctx); err != nil {
					t.Error(err)
				}
				if _, _, err := p.Stale(ctx, name); err != nil && !errors.Is(err, ErrUntracked) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if p.Len() > 16 {
		t.Fatalf("bound exceeded: %d entries", p.Len())
	}
}

// TestHashText: JSON shows hashes as hex; CBOR keeps 32 raw bytes.
func TestHashText(t *testing.T) {
	v := HashBytes([]byte("hello"))
	b, err := json.Marshal(Entry{Path: "a", Exists: true, Hash: v.Hash, Size: 5, Op: OpRead})
	if err != nil {
		t.Fatal(err)
	}
	const hexHello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	if !strings.Contains(string(b), `"Hash":"`+hexHello+`"`) {
		t.Fatalf("JSON = %s", b)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil || e.Hash != v.Hash {
		t.Fatalf("JSON round trip = %v, %v", e.Hash, err)
	}
	c, err := cbor.Marshal(v.Hash)
	if err != nil || len(c) != 34 || c[0] != 0x58 || c[1] != 32 {
		t.Fatalf("CBOR = %x, %v; want a 32-byte string", c, err)
	}
	for _, bad := range []string{"", "abc", hexHello[:62], hexHello + "00", strings.Repeat("zz", 32)} {
		var h Hash
		if err := h.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) succeeded", bad)
		}
	}
}
