//go:build unix

package guestfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// OpenRoot opens a directory, or a symlink to one, as the directory
// itself, and refuses anything else at once with an error that names
// the path it was given.
func TestOpenRootTakesOnlyADirectory(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	file := filepath.Join(dir, "file")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ws", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ws, ws + "/", link} {
		root, err := OpenRoot(p)
		if err != nil {
			t.Fatalf("open %s: %v", p, err)
		}
		if _, err := root.Stat("a.txt"); err != nil {
			t.Errorf("%s is not the workspace: %v", p, err)
		}
		root.Close()
	}
	for p, want := range map[string]error{file: syscall.ENOTDIR, filepath.Join(dir, "none"): fs.ErrNotExist, "": fs.ErrNotExist} {
		root, err := OpenRoot(p)
		var pe *os.PathError
		if err == nil {
			root.Close()
			t.Fatalf("open %q: opened", p)
		}
		if !errors.Is(err, want) || !errors.As(err, &pe) || pe.Path != p {
			t.Errorf("open %q: %v (%#v), want %v naming the path", p, err, err, want)
		}
	}
}

// A system error that WASI has no errno for reaches the guest as EIO: a
// full disk once reached it as EPERM, the errno of an escape, and a tool
// told the model its workspace was read-only. An escape stays EPERM.
func TestErrnoOfAFullDiskIsEIONotEPERM(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG, syscall.EXDEV} {
		if got := Errno(&os.PathError{Op: "write", Path: "f", Err: errno}); got != experimentalsys.EIO {
			t.Errorf("%v is %v to the guest, want EIO", errno, got)
		}
	}
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Open("../outside")
	if got := Errno(err); got != experimentalsys.EPERM {
		t.Errorf("an escape (%v) is %v to the guest, want EPERM", err, got)
	}
}
