package overlay

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// The mount's root, as a call's preopen opens it, holds no descriptor of
// its own and describes the workspace directory, read when asked: a file
// added after the open shows in its listing.
func TestMountRootIsDescribedNotHeldOpen(t *testing.T) {
	ws := t.TempDir()
	ov, err := New(ws, filepath.Join(t.TempDir(), "staging"))
	if err != nil {
		t.Fatal(err)
	}
	defer ov.Close()
	files := guestfs.NewBudget(3)
	fsys, _, err := ov.Mount(context.Background(), true, files, guestfs.StagingLimit{Bytes: guestfs.DefaultStagingLimit, Paths: guestfs.DefaultMaxStagedPaths})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", ".", "/"} {
		f, e := fsys.OpenFile(p, experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
		if e != 0 {
			t.Fatalf("open %q: %v", p, e)
		}
		d, ok := f.(*overlayDir)
		if !ok || !d.root || d.lower != nil {
			t.Fatalf("open %q gave %T %+v, not the root undescribed", p, f, f)
		}
		st, e := f.Stat()
		var want syscall.Stat_t
		if err := syscall.Stat(ws, &want); err != nil {
			t.Fatal(err)
		}
		if e != 0 || st.Ino != want.Ino || st.Dev != want.Dev || !st.Mode.IsDir() {
			t.Fatalf("stat of %q: %+v, %v; want the workspace's inode %d", p, st, e, want.Ino)
		}
		if err := os.WriteFile(filepath.Join(ws, "late-"+map[string]string{"": "a", ".": "b", "/": "c"}[p]), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ents, e := f.Readdir(-1)
		if e != 0 || len(ents) == 0 {
			t.Fatalf("listing of %q: %v, %v", p, ents, e)
		}
		if e := f.Close(); e != 0 {
			t.Fatal(e)
		}
	}
	if err := files.Take(); err != 0 {
		t.Fatalf("the roots' closes did not give their budget back: %v", err)
	}
}
