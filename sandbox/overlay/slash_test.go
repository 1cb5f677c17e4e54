package overlay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A trailing slash names a directory: renaming "file/", or a file to
// "x/" (even onto a directory), is ENOTDIR, and so is unlinking "file/",
// as rename(2) and unlink(2) say, and the file stays. The overlay once
// renamed or removed the file, on a workspace file and a staged one
// alike, and the plain mount said EISDIR of a file renamed to "dir/".
func TestTrailingSlashOnAFileIsNotADirectory(t *testing.T) {
	for _, tt := range []struct {
		name string
		do   func(experimentalsys.FS) experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"rename f/ x", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("f/", "x") }, experimentalsys.ENOTDIR},
		{"rename f x/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("f", "x/") }, experimentalsys.ENOTDIR},
		{"rename f d/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("f", "d/") }, experimentalsys.ENOTDIR},
		{"rename f/ f2/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("f/", "f2/") }, experimentalsys.ENOTDIR},
		{"unlink f/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Unlink("f/") }, experimentalsys.ENOTDIR},
		{"rename d/ x/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("d/", "x/") }, 0},
	} {
		for _, mount := range []string{"plain", "overlay", "overlay, staged"} {
			ws := t.TempDir()
			if err := os.Mkdir(filepath.Join(ws, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			var fsys experimentalsys.FS
			if mount == "plain" {
				root, err := os.OpenRoot(ws)
				if err != nil {
					t.Fatal(err)
				}
				defer root.Close()
				fsys = &guestfs.Dir{Root: root, Files: guestfs.NewBudget(8)}
			} else {
				_, fsys = mounted(t, ws, 1<<20)
			}
			if mount == "overlay, staged" {
				create(t, fsys, "f").Close()
			} else if err := os.WriteFile(filepath.Join(ws, "f"), []byte("f"), 0o644); err != nil {
				t.Fatal(err)
			}
			if e := tt.do(fsys); e != tt.want {
				t.Errorf("%s: %s: %v, want %v", mount, tt.name, e, tt.want)
			}
			if _, e := fsys.Stat("f"); e != 0 {
				t.Errorf("%s: f after %s: %v", mount, tt.name, e)
			}
		}
	}
}

// Regression: renaming a symlink of the workspace named with a trailing
// slash ("el/", el -> e), or renaming onto one so named, was EPERM on an
// overlay, the errno of a link the overlay refuses, where rename(2) says
// ENOTDIR, as the plain mount does; unlinking "el/" so too. Each is
// ENOTDIR on both mounts, and the link and its directory stay.
func TestTrailingSlashOnALinkIsNotADirectory(t *testing.T) {
	for _, tt := range []struct {
		name string
		do   func(experimentalsys.FS) experimentalsys.Errno
	}{
		{"rename el/ x", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("el/", "x") }},
		{"rename el/ x/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("el/", "x/") }},
		{"rename d el/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("d", "el/") }},
		{"rename d/ el/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("d/", "el/") }},
		{"rename f el/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Rename("f", "el/") }},
		{"unlink el/", func(fsys experimentalsys.FS) experimentalsys.Errno { return fsys.Unlink("el/") }},
	} {
		for _, mount := range []string{"plain", "overlay"} {
			ws := t.TempDir()
			for _, d := range []string{"d", "e"} {
				if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(ws, "f"), []byte("f"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("e", filepath.Join(ws, "el")); err != nil {
				t.Fatal(err)
			}
			var fsys experimentalsys.FS
			if mount == "plain" {
				root, err := os.OpenRoot(ws)
				if err != nil {
					t.Fatal(err)
				}
				defer root.Close()
				fsys = &guestfs.Dir{Root: root, Files: guestfs.NewBudget(8)}
			} else {
				_, fsys = mounted(t, ws, 1<<20)
			}
			if e := tt.do(fsys); e != experimentalsys.ENOTDIR {
				t.Errorf("%s: %s: %v, want ENOTDIR", mount, tt.name, e)
			}
			for _, p := range []string{"el", "e", "d", "f"} {
				if _, e := fsys.Lstat(p); e != 0 {
					t.Errorf("%s: %s after %s: %v", mount, p, tt.name, e)
				}
			}
		}
	}
}
