package overlay

import (
	"strings"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Rename renames within the call's view: the old path is removed and the
// new one written. A file the call has staged moves; a file of the
// workspace is copied. A directory is renamed by renaming everything in
// it, after checking that all of it can be (no symlinks, nothing but
// regular files and directories, within the staging limit), and put back
// as it was should any of it fail.
func (v *overlayFS) Rename(from, to string) experimentalsys.Errno {
	if v.readOnly {
		return experimentalsys.EROFS
	}
	from, e := v.resolve(0, from)
	if e != 0 {
		return e
	}
	to, e = v.resolve(1, to)
	if e != 0 {
		return e
	}
	fromDir := strings.HasSuffix(from, "/")
	to, toDir, e := clean(to)
	if e != 0 {
		return e
	}
	if to == "." {
		return experimentalsys.EINVAL
	}
	from, e = v.changing(from, experimentalsys.EINVAL)
	if e != 0 {
		return e
	}
	defer v.o.mu.Unlock()
	if (fromDir || toDir) && v.o.notDir(from) {
		// A trailing slash on either path names a directory: rename(2)
		// says ENOTDIR when the old path is not one (a symlink too: it
		// is not followed). A directory renamed onto "x/" that is not
		// one is ENOTDIR in rename as it is without the slash.
		return experimentalsys.ENOTDIR
	}
	if e := v.o.rename(from, to); e != 0 {
		return e
	}
	guestfs.DirsOf(v.o.ctx).Renamed(v, from, to)
	return 0
}

// rename answers what rename(2) refuses on Linux as it does (ENOENT,
// ENOTDIR, EISDIR) before what the overlay refuses of a rename Linux would
// make: moving or replacing a workspace symlink (EPERM) or special file
// (EACCES). A directory renamed onto a symlink is ENOTDIR, the symlink
// untouched, whether or not the overlay would have replaced it.
func (o *Overlay) rename(from, to string) experimentalsys.Errno {
	src, e := o.lookup(from, true)
	if e != 0 {
		return e
	}
	if !src.exists() {
		return experimentalsys.ENOENT
	}
	dst, e := o.lookup(to, true)
	switch {
	case e != 0:
		return e
	case from == to:
		return 0
	case isReserved(to):
		return experimentalsys.EACCES
	case src.isDir() && dst.exists() && !dst.isDir():
		return experimentalsys.ENOTDIR
	case !src.isDir() && dst.isDir():
		return experimentalsys.EISDIR
	case dst.n == nil && dst.lower == lowerLink, src.n == nil && src.lower == lowerLink:
		return experimentalsys.EPERM
	case dst.n == nil && dst.lower == lowerOther, src.n == nil && src.lower == lowerOther:
		return experimentalsys.EACCES
	case src.isDir():
		return o.renameDir(from, to, dst)
	}
	if e := o.fits(src.n == nil, from, to); e != 0 {
		return e
	}
	return o.renameFile(from, to, src, dst)
}

// fits checks that the nodes of paths and (copy) the workspace's file at
// paths[0] fit in the staging limit, so that a rename that starts ends.
func (o *Overlay) fits(copy bool, paths ...string) experimentalsys.Errno {
	var need int64
	var names int
	for _, p := range paths {
		if _, ok := o.nodes[p]; !ok {
			need, names = need+nodeCost, names+len(p)
		}
	}
	if e := o.admits(int(need/nodeCost), names); e != 0 {
		return e
	}
	if copy {
		fi, err := o.ws.Lstat(paths[0])
		if err != nil {
			return o.errno(err)
		}
		need += fi.Size()
	}
	if need > o.limit-o.used {
		return o.refuse()
	}
	return 0
}

// renameFile moves a file to a path that holds no directory. The
// destination keeps the base of what the workspace held there. Within a
// directory's rename, where each step is undone should a later one fail,
// the destination holds no staged file (the directory renamed onto is
// empty), so that none is replaced.
func (o *Overlay) renameFile(from, to string, src, dst entry) experimentalsys.Errno {
	dn := dst.n
	if dn != nil {
		o.remember(dn)
	} else {
		dn = &node{kind: nodeGone}
		if dst.lower == lowerFile {
			base, mode, e := o.hashLower(to)
			if e != 0 {
				return e
			}
			dn.base, dn.mode = base, mode
		}
	}
	old := dn.blob
	if src.n != nil {
		if err := o.st.Rename(blobName(from), blobName(to)); err != nil {
			return o.errno(err)
		}
		o.undoable(func() { o.st.Rename(blobName(to), blobName(from)) })
		o.remember(src.n)
		dn.kind, dn.blob, dn.mode = nodeFile, src.n.blob, src.n.mode
		src.n.kind, src.n.blob = nodeGone, nil
	} else {
		v, mode, e := o.copyLower(from, to, true)
		if e != 0 {
			return e
		}
		o.used += v.Size
		o.undoable(func() {
			o.st.Remove(blobName(to))
			o.used -= v.Size
		})
		dn.kind, dn.blob, dn.mode = nodeFile, &blob{size: v.Size}, mode
		o.setNode(from, &node{kind: nodeGone, base: v, mode: mode})
	}
	o.drop(old)
	return o.setNode(to, dn)
}

// renameDir renames a directory to a path that holds nothing or an empty
// directory, not inside itself. It renames each entry in turn; should one
// fail (a workspace file that cannot be read, the call's time up), the
// entries already renamed are put back, so that the rename is whole or
// not at all, as rename(2)'s is, and no half of it is ever applied.
func (o *Overlay) renameDir(from, to string, dst entry) (e experimentalsys.Errno) {
	if strings.HasPrefix(to, from+"/") {
		return experimentalsys.EINVAL
	}
	if dst.exists() {
		if !dst.isDir() {
			return experimentalsys.ENOTDIR
		}
		names, e := o.list(to)
		if e != 0 {
			return e
		}
		if len(names) > 0 {
			return experimentalsys.ENOTEMPTY
		}
	}
	need, paths, names, e := o.treeCost(from, len(to)-len(from))
	if e != 0 {
		return e
	}
	if need > o.limit-o.used {
		return o.refuse()
	}
	if e := o.admits(paths, names); e != 0 {
		return e
	}
	if o.undo == nil { // the outermost directory renamed
		var steps []func()
		o.undo = &steps
		defer func() {
			o.undo = nil
			for i := len(steps) - 1; e != 0 && i >= 0; i-- {
				steps[i]()
			}
		}()
	}
	if !dst.exists() {
		base, _ := baseOf(dst)
		o.setNode(to, &node{kind: nodeDir, base: base, mode: 0o755})
	}
	ents, e := o.list(from)
	if e != 0 {
		return e
	}
	for _, en := range ents {
		if e := o.rename(join(from, en.name), join(to, en.name)); e != 0 {
			return e
		}
	}
	return o.rmdir(from)
}

// treeCost is what renaming the directory p to a path grow bytes longer
// costs against the staging limits, at most: in bytes, in new paths and
// in the bytes of their names; or why it cannot be renamed.
func (o *Overlay) treeCost(p string, grow int) (int64, int, int, experimentalsys.Errno) {
	ents, e := o.list(p)
	if e != 0 {
		return 0, 0, 0, e
	}
	need, paths, names := int64(2*nodeCost), 2, 2*len(p)+grow
	for _, en := range ents {
		c := join(p, en.name)
		switch en.kind {
		case lowerLink:
			return 0, 0, 0, experimentalsys.EPERM
		case lowerOther:
			return 0, 0, 0, experimentalsys.EACCES
		case lowerDir:
			n, k, b, e := o.treeCost(c, grow)
			if e != 0 {
				return 0, 0, 0, e
			}
			need, paths, names = need+n, paths+k, names+b
		default:
			need, paths, names = need+2*nodeCost, paths+2, names+2*len(c)+grow
			if !en.changed {
				need += en.size
			}
		}
	}
	return need, paths, names, 0
}
