package guestfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// renameOverDir renames from onto the existing directory to: rename(2)
// itself, on the two parent directories opened through the mount's root,
// so that it replaces an empty directory and refuses a non-empty one
// (ENOTEMPTY) or a file over a directory (EISDIR). Only the last element of
// each path is named to the kernel, and one that would leave its parent
// ("." or "..") is refused.
func (w *Dir) renameOverDir(from, to string) experimentalsys.Errno {
	fromDir, fromBase := path.Split(path.Clean(from))
	toDir, toBase := path.Split(path.Clean(to))
	for _, b := range []string{fromBase, toBase} {
		if b == "." || b == ".." || b == "" {
			return experimentalsys.EINVAL
		}
	}
	src, err := w.Root.Open(rel(fromDir))
	if err != nil {
		return w.Errno(err)
	}
	defer src.Close()
	dst, err := w.Root.Open(rel(toDir))
	if err != nil {
		return w.Errno(err)
	}
	defer dst.Close()
	return w.Errno(unix.Renameat(int(src.Fd()), fromBase, int(dst.Fd()), toBase))
}

// ontoKind refuses, as rename(2) does, to rename src onto what is at to:
// a directory onto what is not one (ENOTDIR) or onto a directory that is
// not empty (ENOTEMPTY), anything else onto a directory (EISDIR). It
// comes before mayMove, so that a rename Linux refuses gets Linux's
// answer, not the refusal of a move that could never have happened. A
// target that does not resolve is left to the rename.
func (w *Dir) ontoKind(src fs.FileInfo, to string) experimentalsys.Errno {
	dst, err := w.Root.Lstat(rel(strings.TrimRight(to, "/")))
	switch {
	case err != nil || os.SameFile(src, dst):
		return 0
	case src.IsDir() && !dst.IsDir():
		return experimentalsys.ENOTDIR
	case !src.IsDir() && dst.IsDir():
		return experimentalsys.EISDIR
	case !src.IsDir():
		return 0
	}
	d, err := w.Root.OpenFile(rel(strings.TrimRight(to, "/")), os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer d.Close()
	if names, _ := d.Readdirnames(1); len(names) > 0 {
		return experimentalsys.ENOTEMPTY
	}
	return 0
}

// intoItself reports whether to names a path below src, a directory, as
// rename(2) refuses with EINVAL: whether src is among the directories
// to's parent is in, up to the mount's root, through whatever links lead
// there (os.Root walks ".." from where a link leads). It comes before
// mayMove, whose refusal is only of renames Linux would make. A path
// that does not resolve, or not within os.Root's bounds, is left to the
// rename.
func (w *Dir) intoItself(src fs.FileInfo, to string) bool {
	root, err := w.Root.Stat(".")
	if err != nil {
		return false
	}
	for p := parent(to); ; p += "/.." {
		fi, err := w.Root.Stat(p)
		switch {
		case err != nil, os.SameFile(fi, root):
			return false
		case os.SameFile(fi, src):
			return true
		}
	}
}

// mayMove refuses (EPERM) to move a symlink, or a directory that holds
// one anywhere below it, or more entries below it than are looked at
// (maxMoveEntries, see holdsNoLink), from its directory to another: a
// relative link is read from where it is, so a move can turn one that
// stays inside the mount ("sub/up" -> "..") into one that leads outside
// it ("up" -> ".."), which os.Root still refuses to follow but the host,
// or anything on it after the call, would follow. Within its own directory a link means
// what it meant. A path whose last name is "." or ".." names no entry of
// a directory to move (EINVAL, as on an overlay). Anything else, and a
// path that does not resolve, is left to the rename. Either path naming
// a symlink with a trailing slash is ENOTDIR, as rename(2) says: os.Root
// would follow the link and move the directory it leads to, from where
// its own parent is, not the link's.
func (w *Dir) mayMove(from, to string) experimentalsys.Errno {
	switch path.Base(from) {
	case ".", "..":
		return experimentalsys.EINVAL
	}
	if w.slashedLink(from) || w.slashedLink(to) {
		return experimentalsys.ENOTDIR
	}
	fi, err := w.Root.Lstat(from)
	if err != nil || (fi.Mode()&fs.ModeSymlink == 0 && !fi.IsDir()) {
		return 0
	}
	if same, e := w.sameDir(parent(from), parent(to)); e != 0 || same {
		return e
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return experimentalsys.EPERM
	}
	return w.holdsNoLink(from)
}

// parent is the directory part of a name relative to the mount, as
// given: its ".." and links are resolved by whoever opens it.
func parent(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndex(p, "/"); i > 0 {
		return p[:i]
	}
	return "."
}

// sameDir reports whether the names a and b lead to the same directory.
func (w *Dir) sameDir(a, b string) (bool, experimentalsys.Errno) {
	if a == b {
		return true, 0
	}
	ai, err := w.Root.Stat(a)
	if err != nil {
		return false, w.Errno(err)
	}
	bi, err := w.Root.Stat(b)
	if err != nil {
		return false, w.Errno(err)
	}
	return os.SameFile(ai, bi), 0
}

// holdsNoLink refuses (EPERM) the directory dir when a symlink is
// anywhere below it, and when more than maxMoveEntries entries are below
// it, looking no further: what a move costs the host is bounded even for
// a call with no deadline. It looks no further once the call must stop
// (EINTR) either. Directories are read a few entries at a time, so that
// one of millions is not read whole.
func (w *Dir) holdsNoLink(dir string) experimentalsys.Errno {
	sub, err := w.Root.OpenRoot(dir)
	if err != nil {
		return w.Errno(err)
	}
	defer sub.Close()
	pending, seen := []string{"."}, 0
	for len(pending) > 0 {
		d := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		f, err := sub.Open(d)
		if err != nil {
			return w.Errno(err)
		}
		for {
			if w.Stopped() {
				f.Close()
				return experimentalsys.EINTR
			}
			entries, err := f.ReadDir(256)
			for _, e := range entries {
				if seen++; seen > maxMoveEntries || e.Type()&fs.ModeSymlink != 0 {
					f.Close()
					return experimentalsys.EPERM
				}
				if e.IsDir() {
					pending = append(pending, path.Join(d, e.Name()))
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return w.Errno(err)
			}
		}
		f.Close()
	}
	return 0
}

// slashedLink reports whether p, relative to the mount, names a symlink
// with a trailing slash. os.Root follows the link then, to act on what it
// leads to, where rename(2), rmdir(2) and unlink(2) refuse it (ENOTDIR).
func (w *Dir) slashedLink(p string) bool {
	bare := strings.TrimRight(p, "/")
	if bare == p || bare == "" {
		return false
	}
	fi, err := w.Root.Lstat(bare)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// maxMoveEntries is how many entries a directory moved to another
// directory may hold below it (see holdsNoLink): walking 100000 takes
// the host a fraction of a second.
var maxMoveEntries = 100_000
