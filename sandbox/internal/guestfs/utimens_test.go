//go:build unix

package guestfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// past is a time no file of a test has on its own.
var past = time.Unix(1, 0)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mtime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

func newDir(t *testing.T, dir string) *Dir {
	t.Helper()
	d, err := NewDir(dir, false, NewBudget(8))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// plantedHardLink makes a mount directory ws holding "hard", a hard link
// to the file outside it, outside.txt.
func plantedHardLink(t *testing.T) (ws, outside string) {
	t.Helper()
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	outside = filepath.Join(dir, "outside.txt")
	write(t, outside, "secret")
	if err := os.Link(outside, filepath.Join(ws, "hard")); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

// TestUtimensThroughHardLinkRefused: path_filestat_set_times on a hard
// link planted in the mount is refused as its open is (EACCES), and on a
// symlink leading out fails, so neither changes the times of the file
// outside; a symlink inside is followed, and a file of the mount changes.
func TestUtimensThroughHardLinkRefused(t *testing.T) {
	ws, outside := plantedHardLink(t)
	if err := os.Symlink("../outside.txt", filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "in.txt"), "in")
	if err := os.Symlink("in.txt", filepath.Join(ws, "inlink")); err != nil {
		t.Fatal(err)
	}
	before := mtime(t, outside)
	d := newDir(t, ws)
	ns := past.UnixNano()
	if e := d.Utimens("hard", ns, ns); e != experimentalsys.EACCES {
		t.Errorf("set times through the hard link: %v, want EACCES", e)
	}
	if e := d.Utimens("/out", ns, ns); e == 0 {
		t.Error("set times through a symlink leading out: succeeded")
	}
	if got := mtime(t, outside); !got.Equal(before) {
		t.Fatalf("the file outside the mount has mtime %v, was %v", got, before)
	}
	if e := d.Utimens("inlink", experimentalsys.UTIME_OMIT, ns); e != 0 {
		t.Fatalf("set times through a symlink inside: %v", e)
	}
	if got := mtime(t, filepath.Join(ws, "in.txt")); !got.Equal(past) {
		t.Errorf("in.txt has mtime %v, want %v", got, past)
	}
	if e := d.Utimens("", ns, ns); e != 0 {
		t.Fatalf("set times of the mount's root: %v", e)
	}
	if got := mtime(t, ws); !got.Equal(past) {
		t.Errorf("the root has mtime %v, want %v", got, past)
	}
}

// TestFileUtimensUsesTheOpenFile: fd_filestat_set_times changes the open
// file, wherever it has been renamed, and not what now has its old name:
// neither another file of the mount nor, once a hard link is renamed onto
// that name, the file outside. An omitted time is left as it is.
func TestFileUtimensUsesTheOpenFile(t *testing.T) {
	ws, outside := plantedHardLink(t)
	write(t, filepath.Join(ws, "f"), "f")
	write(t, filepath.Join(ws, "other"), "other")
	d := newDir(t, ws)
	f, e := d.OpenFile("f", experimentalsys.O_RDWR, 0)
	if e != 0 {
		t.Fatalf("open f: %v", e)
	}
	defer f.Close()
	for _, r := range [][2]string{{"f", "g"}, {"other", "f"}} {
		if e := d.Rename(r[0], r[1]); e != 0 {
			t.Fatalf("rename %s to %s: %v", r[0], r[1], e)
		}
	}
	otherBefore := mtime(t, filepath.Join(ws, "f"))
	ns := past.UnixNano()
	if e := f.Utimens(experimentalsys.UTIME_OMIT, ns); e != 0 {
		t.Fatalf("set times of the open file: %v", e)
	}
	if got := mtime(t, filepath.Join(ws, "g")); !got.Equal(past) {
		t.Errorf("the open file, now g, has mtime %v, want %v", got, past)
	}
	if got := mtime(t, filepath.Join(ws, "f")); !got.Equal(otherBefore) {
		t.Errorf("the file now named f has mtime %v, was %v", got, otherBefore)
	}

	outsideBefore := mtime(t, outside)
	if e := d.Rename("hard", "f"); e != 0 {
		t.Fatalf("rename hard to f: %v", e)
	}
	if e := f.Utimens(ns+1, ns+1); e != 0 {
		t.Fatalf("set times of the open file: %v", e)
	}
	if got := mtime(t, outside); !got.Equal(outsideBefore) {
		t.Fatalf("the file outside the mount has mtime %v, was %v", got, outsideBefore)
	}
	st, e := f.Stat()
	if e != 0 || st.Mtim != ns+1 || st.Atim != ns+1 {
		t.Errorf("the open file: atim %d mtim %d (%v), want %d", st.Atim, st.Mtim, e, ns+1)
	}
}

// TestUtimensReadOnly: a read-only mount refuses times by path and by
// descriptor.
func TestUtimensReadOnly(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "f"), "f")
	d, err := NewDir(ws, true, NewBudget(8))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if e := d.Utimens("f", 1, 1); e != experimentalsys.EROFS {
		t.Errorf("by path: %v, want EROFS", e)
	}
	f, e := d.OpenFile("f", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer f.Close()
	if e := f.Utimens(1, 1); e != experimentalsys.EROFS {
		t.Errorf("by descriptor: %v, want EROFS", e)
	}
}
