package guestfs

import (
	"os"
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Regression: removing a symlink to a directory named with a trailing
// slash ("el/", el -> e) removed the directory it leads to, e, as
// os.Root follows the link, where rmdir(2) and unlink(2) say ENOTDIR and
// an overlay does: a guest removed a directory by a name that is not
// its. Both are ENOTDIR, and e stays.
func TestRemovalOfALinkWithATrailingSlashIsENOTDIR(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("e", filepath.Join(ws, "el")); err != nil {
		t.Fatal(err)
	}
	w, err := NewDir(ws, false, NewBudget(4))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for name, remove := range map[string]func(string) experimentalsys.Errno{"rmdir": w.Rmdir, "unlink": w.Unlink} {
		if e := remove("el/"); e != experimentalsys.ENOTDIR {
			t.Errorf("%s el/: %v, want ENOTDIR", name, e)
		}
		if fi, err := os.Lstat(filepath.Join(ws, "e")); err != nil || !fi.IsDir() {
			t.Fatalf("after %s el/, e is %v, %v; want the directory kept", name, fi, err)
		}
	}
}
