package filepool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func watch(t *testing.T, p *Pool) *Watcher {
	t.Helper()
	w, err := p.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func TestWatchReportsOutsideEdit(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "a.txt", "a")
	writeFile(t, dir, "sub/b.txt", "b")
	saw(t, p, "a.txt")
	saw(t, p, "sub/b.txt")
	w := watch(t, p)

	writeFile(t, dir, "sub/b.txt", "b, edited")
	writeFile(t, dir, "sub/untracked.txt", "noise")
	got := drainUntil(t, w, "sub/b.txt")
	if ps := paths(got); !slices.Equal(ps, []string{"sub/b.txt:modified"}) {
		t.Fatalf("drained %v", ps)
	}
	if got[0].Was.Size != 1 || got[0].Now.Size != 9 {
		t.Fatalf("change = %+v", got[0])
	}
	// Drained changes are accepted: told once, not again, not on resume.
	if cs, err := w.Drain(context.Background()); err != nil || len(cs) != 0 {
		t.Fatalf("second Drain = %v, %v", paths(cs), err)
	}
	if cs, err := p.Reconcile(context.Background()); err != nil || len(cs) != 0 {
		t.Fatalf("Reconcile after Drain = %v, %v", paths(cs), err)
	}
}

// TestWatchReportsReplaceByRename replaces a tracked file the way editors
// save: write a temp file beside it, rename it over. Twice, because a watch
// on the file itself would not survive the first.
func TestWatchReportsReplaceByRename(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	writeFile(t, dir, "notes.md", "first")
	saw(t, p, "notes.md")
	w := watch(t, p)
	for _, content := range []string{"second version", "third"} {
		writeFile(t, dir, ".notes.md.swp", content)
		if err := os.Rename(filepath.Join(dir, ".notes.md.swp"), filepath.Join(dir, "notes.md")); err != nil {
			t.Fatal(err)
		}
		got := drainUntil(t, w, "notes.md")
		last := got[len(got)-1]
		if last.Kind != Modified || last.Now != HashBytes([]byte(content)) {
			t.Fatalf("change = %+v, want the content %q", last, content)
		}
	}
}

// TestWatchIgnoresOwnWrites applies the agent's effects the way the host
// does (in place, by rename, by delete), records each, then makes one
// outside edit. Events arrive in order, so by the time the outside edit is
// drained, the agent's own events have been too; none may be reported.
func TestWatchIgnoresOwnWrites(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	ctx := context.Background()
	for _, name := range []string{"inplace.txt", "renamed.txt", "deleted.txt", "sentinel.txt"} {
		writeFile(t, dir, name, "base")
		saw(t, p, name)
	}
	w := watch(t, p)

	record := func(e Entry) {
		t.Helper()
		if _, err := p.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	v := HashBytes([]byte("agent wrote this"))
	writeFile(t, dir, "inplace.txt", "agent wrote this")
	record(Entry{Path: "inplace.txt", Exists: true, Hash: v.Hash, Size: v.Size, Round: 2, Call: "c1", Op: OpWrite})
	writeFile(t, dir, ".cairn-apply.tmp", "agent wrote this")
	if err := os.Rename(filepath.Join(dir, ".cairn-apply.tmp"), filepath.Join(dir, "renamed.txt")); err != nil {
		t.Fatal(err)
	}
	record(Entry{Path: "renamed.txt", Exists: true, Hash: v.Hash, Size: v.Size, Round: 2, Call: "c2", Op: OpWrite})
	os.Remove(filepath.Join(dir, "deleted.txt"))
	record(Entry{Path: "deleted.txt", Round: 2, Call: "c3", Op: OpDelete})
	writeFile(t, dir, "created.txt", "agent made this")
	if _, err := p.Saw(ctx, "created.txt", 2, "c4", OpWrite); err != nil {
		t.Fatal(err)
	}

	writeFile(t, dir, "sentinel.txt", "outside")
	got := drainUntil(t, w, "sentinel.txt")
	more, err := w.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ps := paths(append(got, more...)); !slices.Equal(ps, []string{"sentinel.txt:modified"}) {
		t.Fatalf("drained %v: the agent's own writes were reported", ps)
	}
	// A path first tracked after Watch is watched too.
	writeFile(t, dir, "created.txt", "edited outside")
	drainUntil(t, w, "created.txt")
}

// TestDrainStoppedWatcher: once a watcher has stopped, events are lost, so
// Drain re-hashes every tracked path instead of reporting nothing.
func TestDrainStoppedWatcher(t *testing.T) {
	ctx := context.Background()
	t.Run("closed", func(t *testing.T) {
		p, dir := newPool(t, State{}, Config{})
		writeFile(t, dir, "a.txt", "a")
		saw(t, p, "a.txt")
		w := watch(t, p)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		writeFile(t, dir, "a.txt", "changed while stopped")
		cs, err := w.Drain(ctx)
		if err != nil || !slices.Equal(paths(cs), []string{"a.txt:modified"}) {
			t.Fatalf("Drain = %v, %v", paths(cs), err)
		}
		if cs, err := w.Drain(ctx); err != nil || len(cs) != 0 {
			t.Fatalf("second Drain = %v, %v", paths(cs), err)
		}
	})
	t.Run("context done", func(t *testing.T) {
		p, dir := newPool(t, State{}, Config{})
		writeFile(t, dir, "a.txt", "a")
		saw(t, p, "a.txt")
		wctx, cancel := context.WithCancel(ctx)
		w, err := p.Watch(wctx)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		<-w.done
		os.Remove(filepath.Join(dir, "a.txt"))
		cs, err := w.Drain(ctx)
		if err != nil || !slices.Equal(paths(cs), []string{"a.txt:deleted"}) {
			t.Fatalf("Drain = %v, %v", paths(cs), err)
		}
	})
	t.Run("pool closed", func(t *testing.T) {
		p, dir := newPool(t, State{}, Config{})
		writeFile(t, dir, "a.txt", "a")
		saw(t, p, "a.txt")
		w := watch(t, p)
		p.Close()
		<-w.done // the pool's Close stops its watchers
		if _, err := w.Drain(ctx); !errors.Is(err, ErrClosed) {
			t.Fatalf("Drain on a closed pool = %v", err)
		}
	})
}

// TestWatchDirectoryLifecycle: a tracked path whose directory does not exist
// yet, and a directory removed and made again.
func TestWatchDirectoryLifecycle(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	saw(t, p, "later/x.txt") // absent, and so is its directory
	w := watch(t, p)

	writeFile(t, dir, "later/x.txt", "made outside")
	if got := drainUntil(t, w, "later/x.txt"); got[len(got)-1].Kind != Created {
		t.Fatalf("drained %v", paths(got))
	}
	writeFile(t, dir, "later/x.txt", "edited outside")
	if got := drainUntil(t, w, "later/x.txt"); got[len(got)-1].Kind != Modified {
		t.Fatalf("drained %v", paths(got))
	}
	if err := os.RemoveAll(filepath.Join(dir, "later")); err != nil {
		t.Fatal(err)
	}
	if got := drainUntil(t, w, "later/x.txt"); got[len(got)-1].Kind != Deleted {
		t.Fatalf("drained %v", paths(got))
	}
	writeFile(t, dir, "later/x.txt", "back again")
	if got := drainUntil(t, w, "later/x.txt"); got[len(got)-1].Kind != Created {
		t.Fatalf("drained %v", paths(got))
	}
}

// TestWatchSkipsDirectoriesOutside: a tracked path under a symlink that
// leads outside is not watched there, and an edit of the outside file is
// not read.
func TestWatchSkipsDirectoriesOutside(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	outside := t.TempDir()
	writeFile(t, outside, "x.txt", "outside")
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skipf("cannot make symlinks here: %v", err)
	}
	saw(t, p, "here.txt")
	if _, err := p.Record(Entry{Path: "out/x.txt", Op: OpRead}); err != nil {
		t.Fatal(err)
	}
	w := watch(t, p)
	for _, abs := range w.fw.WatchList() {
		if abs != p.dir {
			t.Fatalf("watching %s; want only the workspace %s", abs, p.dir)
		}
	}
	writeFile(t, outside, "x.txt", "edited outside the workspace")
	writeFile(t, dir, "here.txt", "sentinel")
	got := drainUntil(t, w, "here.txt")
	for _, c := range got {
		if c.Path == "out/x.txt" && c.Kind != Unreadable {
			t.Fatalf("read through the symlink: %+v", c)
		}
	}
}
