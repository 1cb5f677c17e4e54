package guestfs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Regression: moving a directory to another directory of a plain mount
// walked all of it looking for symlinks, however much it held: bounded
// by the call's deadline, but not at all under cairn exec --timeout 0,
// where a guest that filled a tree kept the host walking it at every
// rename. The walk stops past maxMoveEntries entries, and the move is
// refused (EPERM) and leaves the tree where it was; a tree within the
// bound still moves, and one holding a link deep down is still refused.
func TestMoveOfADirectoryPastTheWalkBoundIsRefused(t *testing.T) {
	defer func(n int) { maxMoveEntries = n }(maxMoveEntries)
	maxMoveEntries = 1000
	ws := t.TempDir()
	// Below it, big holds 1001 entries (a, 10 directories in it and the
	// files in those), small 1000.
	for _, tree := range []struct {
		name  string
		count int
	}{{"big", 1000}, {"small", 999}} {
		for i := 0; i < tree.count; i++ {
			dir := filepath.Join(ws, "from", tree.name, "a", fmt.Sprint(i/100))
			if i%100 == 0 {
				must(t, os.MkdirAll(dir, 0o755))
				continue // the directory is an entry too
			}
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644))
		}
	}
	must(t, os.MkdirAll(filepath.Join(ws, "from", "linked", "a", "b"), 0o755))
	must(t, os.Symlink("..", filepath.Join(ws, "from", "linked", "a", "b", "up")))
	must(t, os.Mkdir(filepath.Join(ws, "to"), 0o755))
	w, err := NewDir(ws, false, NewBudget(8))
	must(t, err)
	defer w.Close()
	for name, want := range map[string]experimentalsys.Errno{"big": experimentalsys.EPERM, "small": 0, "linked": experimentalsys.EPERM} {
		if e := w.Rename("from/"+name, "to/"+name); e != want {
			t.Errorf("rename from/%s to/%s: %v, want %v", name, name, e, want)
		}
		stays := filepath.Join(ws, "from", name)
		if want == 0 {
			stays = filepath.Join(ws, "to", name)
		}
		if fi, err := os.Lstat(stays); err != nil || !fi.IsDir() {
			t.Errorf("after the rename of %s: %s is %v, %v", name, stays, fi, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
