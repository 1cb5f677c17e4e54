package filepool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestReconcile(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	ctx := context.Background()
	for _, name := range []string{"same.txt", "edited.txt", "removed.txt", "sub/deep.txt", "becomes-dir", "dir/x.txt"} {
		writeFile(t, dir, name, "before")
		saw(t, p, name)
	}
	saw(t, p, "appears.txt") // absent when seen
	saw(t, p, "never.txt")   // absent when seen, and still absent
	if cs, err := p.Reconcile(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("Reconcile of an untouched workspace = %v, %v", paths(cs), err)
	}

	writeFile(t, dir, "edited.txt", "after, and longer")
	writeFile(t, dir, "sub/deep.txt", "aft3r") // same size, other content
	writeFile(t, dir, "appears.txt", "new")
	writeFile(t, dir, "untracked.txt", "not ours")
	os.Remove(filepath.Join(dir, "removed.txt"))
	os.Remove(filepath.Join(dir, "becomes-dir"))
	os.Mkdir(filepath.Join(dir, "becomes-dir"), 0o755)
	os.Chtimes(filepath.Join(dir, "same.txt"), testTime, testTime) // touched, not changed
	os.RemoveAll(filepath.Join(dir, "dir"))
	writeFile(t, dir, "dir", "a file where a directory was")

	cs, err := p.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"appears.txt:created", "becomes-dir:unreadable", "dir/x.txt:deleted",
		"edited.txt:modified", "removed.txt:deleted", "sub/deep.txt:modified"}
	if got := paths(cs); !slices.Equal(got, want) {
		t.Fatalf("Reconcile = %v, want %v", got, want)
	}
	edited := cs[3]
	if edited.Was.Size != 6 || edited.Now != HashBytes([]byte("after, and longer")) || edited.Was.Call != "c1" {
		t.Fatalf("modified change = %+v", edited)
	}
	if cs[1].Reason != "a directory" {
		t.Fatalf("unreadable reason = %q", cs[1].Reason)
	}
	// Reconcile changes nothing by itself.
	if again, _ := p.Reconcile(ctx); !reflect.DeepEqual(again, cs) {
		t.Fatalf("second Reconcile = %v", paths(again))
	}
}

func TestAccept(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	ctx := context.Background()
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		writeFile(t, dir, name, "1")
		saw(t, p, name)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		writeFile(t, dir, name, "22")
	}
	os.Remove(filepath.Join(dir, "c.txt"))
	cs, err := p.Reconcile(ctx)
	if err != nil || len(cs) != 3 {
		t.Fatalf("Reconcile = %v, %v", paths(cs), err)
	}
	// The agent writes b.txt after the changes were found: its record wins.
	writeFile(t, dir, "b.txt", "333")
	if _, err := p.Saw(ctx, "b.txt", 2, "c9", OpWrite); err != nil {
		t.Fatal(err)
	}
	if n := p.Accept(cs); n != 2 {
		t.Fatalf("Accept changed %d entries, want 2", n)
	}
	if cs, err := p.Reconcile(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("Reconcile after Accept = %v, %v", paths(cs), err)
	}
	a, _ := p.Lookup("a.txt")
	if !a.Outside || a.Size != 2 || a.Round != 1 || a.Call != "c1" {
		t.Fatalf("accepted entry = %+v", a)
	}
	if b, _ := p.Lookup("b.txt"); b.Outside || b.Call != "c9" {
		t.Fatalf("the agent's newer record was overwritten: %+v", b)
	}
	// An accepted entry still checkpoints and loads.
	st := p.State()
	p2, err := New(dir, st, Config{})
	if err != nil {
		t.Fatalf("New from a state with accepted entries: %v", err)
	}
	p2.Close()
}

// TestSymlinkOutsideIsNotFollowed plants symlinks that lead out of the
// workspace where tracked files were. The outside file holds the same bytes
// as the tracked one: following the link would see no change.
func TestSymlinkOutsideIsNotFollowed(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	ctx := context.Background()
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", "same")
	writeFile(t, outside, "sub/inner.txt", "same")
	writeFile(t, dir, "link.txt", "same")
	writeFile(t, dir, "sub/inner.txt", "same")
	e := saw(t, p, "link.txt")
	saw(t, p, "sub/inner.txt")

	replaceWithSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt"))
	replaceWithSymlink(t, filepath.Join(outside, "sub"), filepath.Join(dir, "sub"))

	cs, err := p.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(cs), []string{"link.txt:unreadable", "sub/inner.txt:unreadable"}; !slices.Equal(got, want) {
		t.Fatalf("Reconcile = %v, want %v", got, want)
	}
	for _, c := range cs {
		if c.Now.Exists || !strings.Contains(c.Reason, "escapes") {
			t.Errorf("%s: %+v", c.Path, c)
		}
	}
	if _, err := p.Saw(ctx, "link.txt", 2, "c2", OpRead); !errors.Is(err, ErrUnreadable) {
		t.Errorf("Saw through an escaping symlink = %v", err)
	}
	if err := p.CheckBase(ctx, "link.txt", e.Version()); !errors.Is(err, ErrConflict) {
		t.Errorf("CheckBase through an escaping symlink = %v", err)
	}
	// A symlink that stays inside is followed like the tools follow it.
	writeFile(t, dir, "real.txt", "same")
	replaceWithSymlink(t, "real.txt", filepath.Join(dir, "link.txt"))
	if c, stale, err := p.Stale(ctx, "link.txt"); err != nil || stale {
		t.Fatalf("Stale through an inside symlink = %+v, %v, %v", c, stale, err)
	}
}

func replaceWithSymlink(t *testing.T, target, at string) {
	t.Helper()
	if err := os.RemoveAll(at); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, at); err != nil {
		t.Skipf("cannot make symlinks here: %v", err)
	}
}

// TestFIFODoesNotBlock plants a named pipe where a tracked file was: with no
// writer, a blocking open would hang Reconcile for ever.
func TestFIFODoesNotBlock(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes in the file system")
	}
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "pipe", "x")
	saw(t, p, "pipe")
	os.Remove(filepath.Join(dir, "pipe"))
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cs, err := p.Reconcile(context.Background())
	if err != nil || len(cs) != 1 || cs[0].Kind != Unreadable || cs[0].Reason != "a named pipe" {
		t.Fatalf("Reconcile = %+v, %v", cs, err)
	}
}

func TestReconcileStopsWithContext(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "a", "a")
	saw(t, p, "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Reconcile(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reconcile with a cancelled context = %v", err)
	}
}

func TestStale(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	ctx := context.Background()
	writeFile(t, dir, "a.txt", "one")
	saw(t, p, "a.txt")
	if _, stale, err := p.Stale(ctx, "a.txt"); err != nil || stale {
		t.Fatalf("Stale of an unchanged file = %v, %v", stale, err)
	}
	writeFile(t, dir, "a.txt", "two!")
	c, stale, err := p.Stale(ctx, "a.txt")
	if err != nil || !stale || c.Kind != Modified || c.Now.Size != 4 {
		t.Fatalf("Stale of a changed file = %+v, %v, %v", c, stale, err)
	}
	if _, _, err := p.Stale(ctx, "b.txt"); !errors.Is(err, ErrUntracked) {
		t.Fatalf("Stale of an untracked file = %v", err)
	}
}

func TestCheckBase(t *testing.T) {
	ctx := context.Background()
	one, two := HashBytes([]byte("one")), HashBytes([]byte("two"))
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, p *Pool, dir string)
		base   Version
		reason string // "" for no conflict
	}{
		{"unchanged", func(t *testing.T, p *Pool, dir string) {}, one, ""},
		{"new file, still absent", func(t *testing.T, p *Pool, dir string) {
			os.Remove(filepath.Join(dir, "f.txt"))
		}, Version{}, ""},
		{"another call wrote it first", func(t *testing.T, p *Pool, dir string) {
			writeFile(t, dir, "f.txt", "two")
			p.Record(Entry{Path: "f.txt", Exists: true, Hash: two.Hash, Size: two.Size, Round: 4, Call: "c2", Op: OpWrite})
		}, one, "call c2 of round 4 wrote it first"},
		{"another call deleted it first", func(t *testing.T, p *Pool, dir string) {
			os.Remove(filepath.Join(dir, "f.txt"))
			p.Record(Entry{Path: "f.txt", Round: 4, Call: "c3", Op: OpDelete})
		}, one, "call c3 of round 4 deleted it first"},
		{"edited outside", func(t *testing.T, p *Pool, dir string) {
			writeFile(t, dir, "f.txt", "two")
		}, one, "it was changed outside the agent"},
		{"deleted outside", func(t *testing.T, p *Pool, dir string) {
			os.Remove(filepath.Join(dir, "f.txt"))
		}, one, "it was deleted outside the agent"},
		{"created outside before the call's create", func(t *testing.T, p *Pool, dir string) {
			os.Remove(filepath.Join(dir, "f.txt"))
			saw(t, p, "f.txt")
			writeFile(t, dir, "f.txt", "two")
		}, Version{}, "it was changed outside the agent"},
		{"edited outside and back", func(t *testing.T, p *Pool, dir string) {
			writeFile(t, dir, "f.txt", "two")
			writeFile(t, dir, "f.txt", "one")
		}, one, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, dir := newPool(t, State{}, Config{})
			writeFile(t, dir, "f.txt", "one")
			saw(t, p, "f.txt")
			tc.setup(t, p, dir)
			err := p.CheckBase(ctx, "f.txt", tc.base)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("CheckBase = %v, want no conflict", err)
				}
				return
			}
			var ce *ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || ce.Reason != tc.reason || ce.Path != "f.txt" {
				t.Fatalf("CheckBase = %v, want a conflict: %s", err, tc.reason)
			}
		})
	}
}
