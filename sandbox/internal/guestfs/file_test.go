package guestfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestRootStatHoldsNoFile: a mount's root, as wazero opens it to ask
// whether it is a directory, is described without being opened on the
// host, so it holds no descriptor and takes nothing of the call's budget
// of open files, even when the budget is spent.
func TestRootStatHoldsNoFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := NewDir(dir, true, NewBudget(1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	root, e := d.OpenFile("", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatalf("open the root: %v", e)
	}
	f, e := d.OpenFile("f.txt", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatalf("open f.txt: %v", e)
	}
	defer f.Close()
	st, e := root.Stat()
	if e != 0 {
		t.Fatalf("stat the root with the budget spent: %v", e)
	}
	want, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !want.Mode().IsDir() || st.Mode&os.ModeDir == 0 || st.Ino != want.Sys().(*syscall.Stat_t).Ino {
		t.Fatalf("root stat: mode %v ino %d, want the directory %s", st.Mode, st.Ino, dir)
	}
	if root.(*File).F != nil {
		t.Fatal("the root was opened on the host to be described")
	}
	if e := root.Close(); e != 0 {
		t.Fatalf("close the root: %v", e)
	}
}
