package overlay

import (
	"io/fs"
	"os"
	"strings"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// overlayFS is an Overlay mounted in one call: the filesystem the guest
// sees. What the call has not changed is served by lower, the workspace
// read-only; what it has, by staged files.
type overlayFS struct {
	experimentalsys.UnimplementedFS
	o        *Overlay
	lower    guestfs.Dir // the workspace, read-only
	staging  guestfs.Dir // the staging directory
	readOnly bool
	files    *guestfs.Budget
}

// OpenFile opens a file or directory of the call's view, within the call's
// budget of open files. Opening an unchanged workspace file for writing
// stages a copy of it first.
func (v *overlayFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if v.readOnly && flag&guestfs.WriteFlags != 0 {
		return nil, experimentalsys.EROFS
	}
	asked := p
	p, e := v.resolve(0, p)
	if e != 0 {
		return nil, e
	}
	p, dirOnly, e := clean(p)
	if e != 0 {
		return nil, e
	}
	if e := v.staging.TakeFile(); e != 0 {
		return nil, e
	}
	v.o.mu.Lock()
	defer v.o.mu.Unlock()
	var f experimentalsys.File
	if flag&guestfs.WriteFlags == 0 {
		f, e = v.openRead(p, dirOnly, flag)
	} else {
		f, e = v.openWrite(p, dirOnly, flag)
	}
	if e != 0 {
		v.files.Give()
		return nil, e
	}
	if d, ok := f.(*overlayDir); ok && !d.root {
		d.anchor = guestfs.DirsOf(v.o.ctx).Open(v, asked, p)
	}
	return f, 0
}

// resolve is the i-th path a function of v's was handed, relative to the
// directory the guest opened that it names, where that directory is now
// in the call's view (see guestfs.Anchor): ENOENT when it is gone.
func (v *overlayFS) resolve(i int, p string) (string, experimentalsys.Errno) {
	_, p, e := guestfs.DirsOf(v.o.ctx).Resolve(v, i, p)
	return p, e
}

func (v *overlayFS) openRead(p string, dirOnly bool, flag experimentalsys.Oflag) (experimentalsys.File, experimentalsys.Errno) {
	en, e := v.o.lookup(p, false)
	if e != 0 {
		return nil, e
	}
	wantDir := dirOnly || flag&experimentalsys.O_DIRECTORY != 0
	if en.n == nil && p == "." {
		// The mount's root, which New opened as a directory and the call
		// has not changed: described by its path when asked, not opened,
		// which spares every call's preopen an open, two fstats and a close.
		return &overlayDir{v: v, path: p, root: true}, 0
	}
	if en.n == nil {
		f, e := v.lower.Open(slashed(p, dirOnly), flag, 0)
		switch {
		case e != 0:
			return nil, e
		case isDir(f):
			return &overlayDir{v: v, path: p, lower: f}, 0
		case wantDir:
			f.F.Close()
			return nil, experimentalsys.ENOTDIR
		}
		if e := v.o.noteRead(p); e != 0 {
			f.F.Close()
			return nil, e
		}
		return v.newReadFile(f, p), 0
	}
	switch en.n.kind {
	case nodeGone:
		return nil, experimentalsys.ENOENT
	case nodeDir:
		return &overlayDir{v: v, path: p, node: en.n}, 0
	}
	if wantDir {
		return nil, experimentalsys.ENOTDIR
	}
	return v.openStaged(p, en.n, flag)
}

func (v *overlayFS) openWrite(p string, dirOnly bool, flag experimentalsys.Oflag) (experimentalsys.File, experimentalsys.Errno) {
	if isReserved(p) {
		return nil, experimentalsys.EACCES
	}
	en, e := v.o.lookup(p, true)
	if e != 0 {
		return nil, e
	}
	excl := flag&experimentalsys.O_CREAT != 0 && flag&experimentalsys.O_EXCL != 0
	n := en.n
	switch {
	case dirOnly && flag&experimentalsys.O_CREAT != 0:
		// open(2) on Linux: O_CREAT makes a file, which a name with a
		// trailing slash cannot be, whatever is there.
		return nil, experimentalsys.EISDIR
	case en.exists() && excl:
		return nil, experimentalsys.EEXIST
	case en.isDir() && flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR|experimentalsys.O_TRUNC|experimentalsys.O_CREAT) == 0:
		// O_APPEND alone: open(2) opens a directory to read.
		return v.openRead(p, dirOnly, flag&^experimentalsys.O_APPEND)
	case en.isDir():
		return nil, experimentalsys.EISDIR
	case n == nil && en.lower == lowerLink:
		return v.openWriteLink(p, dirOnly, flag)
	case dirOnly && !en.exists():
		return nil, experimentalsys.ENOENT
	case dirOnly:
		return nil, experimentalsys.ENOTDIR
	case n == nil && en.lower == lowerOther:
		return nil, experimentalsys.EACCES
	case n == nil && en.lower == lowerFile:
		n, e = v.o.copyUp(p, flag&experimentalsys.O_TRUNC != 0)
	case !en.exists() && flag&experimentalsys.O_CREAT == 0:
		return nil, experimentalsys.ENOENT
	case !en.exists():
		n, e = v.o.create(p, en)
	}
	if e != 0 {
		return nil, e
	}
	return v.openStaged(p, n, flag&^(experimentalsys.O_CREAT|experimentalsys.O_EXCL))
}

// openWriteLink answers an open to write of p, a symlink of the
// workspace, which is never written through (EPERM), as open(2) would
// have refused it first: with O_NOFOLLOW (ELOOP), leading nowhere without
// O_CREAT (ENOENT), to a directory (EISDIR; one opened only to append is
// opened to read, as open(2) does), to a file with a trailing slash
// (ENOTDIR).
func (v *overlayFS) openWriteLink(p string, dirOnly bool, flag experimentalsys.Oflag) (experimentalsys.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_NOFOLLOW != 0 && !dirOnly {
		return nil, guestfs.NoFollowErrno(flag)
	}
	st, e := v.lower.Stat(p)
	isDir := e == 0 && st.Mode.IsDir()
	switch {
	case e == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT == 0:
		return nil, e
	case e != 0 && e != experimentalsys.ENOENT:
		return nil, e
	case isDir && flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR|experimentalsys.O_TRUNC|experimentalsys.O_CREAT) == 0:
		return v.openRead(p, dirOnly, flag&^experimentalsys.O_APPEND)
	case isDir:
		return nil, experimentalsys.EISDIR
	case dirOnly:
		return nil, experimentalsys.ENOTDIR
	}
	return nil, experimentalsys.EPERM
}

// slashed is p with a trailing slash when dirOnly: the name the
// workspace's filesystem resolves as open(2) and stat(2) resolve one
// (following a final symlink, and ENOTDIR when it is no directory).
func slashed(p string, dirOnly bool) string {
	if dirOnly && p != "." {
		return p + "/"
	}
	return p
}

// openStaged opens the staged file of p, truncating it if asked.
func (v *overlayFS) openStaged(p string, n *node, flag experimentalsys.Oflag) (experimentalsys.File, experimentalsys.Errno) {
	trunc := flag&experimentalsys.O_TRUNC != 0
	flag &^= experimentalsys.O_DIRECTORY | experimentalsys.O_NOFOLLOW | experimentalsys.O_TRUNC
	f, err := v.o.st.OpenFile(blobName(p), guestfs.OSFlags(flag), 0)
	if err != nil {
		return nil, v.o.errno(err)
	}
	if trunc && n.blob.size > 0 {
		if err := v.o.emptyBlob(p, f, flag); err != nil {
			f.Close()
			return nil, v.o.errno(err)
		}
		v.o.resized(n.blob, 0)
	}
	sf := &stagedFile{File: &guestfs.File{F: f, FS: &v.staging, Path: blobName(p), Append: flag&experimentalsys.O_APPEND != 0}, o: v.o, b: n.blob,
		ino: syntheticIno(p)}
	v.o.hold(n.blob)
	return sf, 0
}

// emptyBlob empties the staged file of p through f, its handle opened with
// flag, or through a handle of its own when f only reads (O_TRUNC with
// O_RDONLY empties the file, as open(2) on Linux does).
func (o *Overlay) emptyBlob(p string, f *os.File, flag experimentalsys.Oflag) error {
	if flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0 {
		return f.Truncate(0)
	}
	w, err := o.st.OpenFile(blobName(p), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer w.Close()
	return w.Truncate(0)
}

// Lstat describes a path of the call's view without following a final
// symlink.
func (v *overlayFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	p, e := v.resolve(0, p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	return v.stat(p, v.lower.Lstat)
}

// Stat describes a path of the call's view, following symlinks that stay
// inside the workspace.
func (v *overlayFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	p, e := v.resolve(0, p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	return v.stat(p, v.lower.Stat)
}

func (v *overlayFS) stat(p string, lower func(string) (sys.Stat_t, experimentalsys.Errno)) (sys.Stat_t, experimentalsys.Errno) {
	p, dirOnly, e := clean(p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	v.o.mu.Lock()
	defer v.o.mu.Unlock()
	en, e := v.o.lookup(p, false)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	var st sys.Stat_t
	switch {
	case en.n == nil:
		if st, e = lower(slashed(p, dirOnly)); e == 0 {
			e = v.o.saw(p) // only what exists: the call saw nothing else to make again
		}
	case en.n.kind == nodeGone:
		return sys.Stat_t{}, experimentalsys.ENOENT
	case en.n.kind == nodeDir:
		st = dirStat(p)
	default:
		fi, err := v.o.st.Stat(blobName(p))
		if err != nil {
			return sys.Stat_t{}, v.o.errno(err)
		}
		st = sys.NewStat_t(fi)
		st.Ino = syntheticIno(p) // as its directory lists it
	}
	if e == 0 && dirOnly && !st.Mode.IsDir() {
		return sys.Stat_t{}, experimentalsys.ENOTDIR
	}
	return st, e
}

// dirStat describes a directory the call made.
func dirStat(p string) sys.Stat_t {
	return sys.Stat_t{Ino: syntheticIno(p), Mode: fs.ModeDir | 0o755, Nlink: 1}
}

// Readlink reads a symlink of the workspace; the call can make none.
func (v *overlayFS) Readlink(p string) (string, experimentalsys.Errno) {
	p, e := v.resolve(0, p)
	if e != 0 {
		return "", e
	}
	p, dirOnly, e := clean(p)
	if e != 0 {
		return "", e
	}
	v.o.mu.Lock()
	defer v.o.mu.Unlock()
	en, e := v.o.lookup(p, false)
	switch {
	case e != 0:
		return "", e
	case en.n == nil:
		return v.lower.Readlink(slashed(p, dirOnly))
	case en.n.kind == nodeGone:
		return "", experimentalsys.ENOENT
	case en.n.kind == nodeFile && dirOnly:
		return "", experimentalsys.ENOTDIR
	}
	return "", experimentalsys.EINVAL
}

// Mkdir makes a directory in the call's view.
func (v *overlayFS) Mkdir(p string, _ fs.FileMode) experimentalsys.Errno {
	p, e := v.resolve(0, p)
	if e != 0 {
		return e
	}
	p, e = v.changing(p, experimentalsys.EEXIST)
	if e != 0 {
		return e
	}
	defer v.o.mu.Unlock()
	en, e := v.o.lookup(p, true)
	switch {
	case e != 0:
		return e
	case en.exists():
		return experimentalsys.EEXIST
	}
	base, _ := baseOf(en)
	return v.o.setNode(p, &node{kind: nodeDir, base: base, mode: 0o755})
}

// Rmdir removes an empty directory of the call's view.
func (v *overlayFS) Rmdir(p string) experimentalsys.Errno {
	p, e := v.resolve(0, p)
	if e != 0 {
		return e
	}
	p, e = v.changing(p, experimentalsys.EINVAL)
	if e != 0 {
		return e
	}
	defer v.o.mu.Unlock()
	if e := v.o.rmdir(p); e != 0 {
		return e
	}
	guestfs.DirsOf(v.o.ctx).Removed(v, p)
	return 0
}

func (o *Overlay) rmdir(p string) experimentalsys.Errno {
	en, e := o.lookup(p, true)
	switch {
	case e != 0:
		return e
	case !en.exists():
		return experimentalsys.ENOENT
	case !en.isDir():
		return experimentalsys.ENOTDIR
	}
	names, e := o.list(p)
	switch {
	case e != 0:
		return e
	case len(names) > 0:
		return experimentalsys.ENOTEMPTY
	case en.n != nil:
		o.remember(en.n)
		en.n.kind = nodeGone
		return 0
	}
	return o.setNode(p, &node{kind: nodeGone, base: dirVersion, mode: 0o755})
}

// Unlink removes a file of the call's view. A symlink of the workspace is
// not removed (EPERM).
func (v *overlayFS) Unlink(p string) experimentalsys.Errno {
	p, e := v.resolve(0, p)
	if e != 0 {
		return e
	}
	dirOnly := strings.HasSuffix(p, "/")
	p, e = v.changing(p, experimentalsys.EISDIR)
	if e != 0 {
		return e
	}
	defer v.o.mu.Unlock()
	if dirOnly && v.o.notDir(p) {
		// "file/" names a directory: unlink(2) says ENOTDIR of a file,
		// EISDIR of a directory.
		return experimentalsys.ENOTDIR
	}
	return v.o.unlink(p)
}

// notDir reports whether the call's view holds something other than a
// directory at p, which the guest named with a trailing slash: the
// kernel says ENOTDIR of that, of a symlink too, which rename(2),
// unlink(2) and rmdir(2) do not follow, whatever it leads to.
func (o *Overlay) notDir(p string) bool {
	en, e := o.lookup(p, true)
	return e == 0 && en.exists() && !en.isDir()
}

func (o *Overlay) unlink(p string) experimentalsys.Errno {
	en, e := o.lookup(p, true)
	n := en.n
	switch {
	case e != 0:
		return e
	case !en.exists():
		return experimentalsys.ENOENT
	case en.isDir():
		return experimentalsys.EISDIR
	case n == nil && en.lower == lowerLink:
		return experimentalsys.EPERM
	case n == nil && en.lower == lowerOther:
		return experimentalsys.EACCES
	case n != nil:
		if err := o.st.Remove(blobName(p)); err != nil {
			return o.errno(err)
		}
		o.drop(n.blob)
		n.kind, n.blob = nodeGone, nil
		return 0
	}
	base, mode, e := o.hashLower(p)
	if e != 0 {
		return e
	}
	return o.setNode(p, &node{kind: nodeGone, base: base, mode: mode})
}

// Chmod is not a WASI preview 1 call; permissions are not effects.
func (v *overlayFS) Chmod(string, fs.FileMode) experimentalsys.Errno { return experimentalsys.ENOSYS }

// Link makes no link, as on every mount, and answers first what linkat(2)
// answers on Linux before it would make one, as guestfs.Dir.Link does.
func (v *overlayFS) Link(old, made string) experimentalsys.Errno {
	p, e := v.resolve(0, old)
	if e != 0 {
		return e
	}
	if _, e := v.stat(p, v.lower.Lstat); e != 0 {
		return e
	}
	return v.unmade(1, made)
}

// Symlink makes no link, as on every mount, and answers first what
// symlinkat(2) answers on Linux of the link's name before it would make
// one, as guestfs.Dir.Symlink does.
func (v *overlayFS) Symlink(_, made string) experimentalsys.Errno { return v.unmade(1, made) }

// unmade is what Link and Symlink answer of made, the name they would
// make, the i-th path of the function called (see guestfs.Unmade).
func (v *overlayFS) unmade(i int, made string) experimentalsys.Errno {
	p, e := v.resolve(i, made)
	if e != 0 {
		return e
	}
	lstat := func(p string) (sys.Stat_t, experimentalsys.Errno) { return v.stat(p, v.lower.Lstat) }
	stat := func(p string) (sys.Stat_t, experimentalsys.Errno) { return v.stat(p, v.lower.Stat) }
	if e := guestfs.Unmade(p, lstat, stat); e != 0 {
		return e
	}
	if v.readOnly {
		return experimentalsys.EROFS
	}
	return experimentalsys.EPERM
}

// Utimens accepts new times for a path of the call's view and keeps them
// only on staged files: times are not effects. A workspace file it may
// not open (see guestfs.Allowed) is refused, as on a plain mount. Told
// not to follow a symlink (guestfs.WithoutFollowing), it accepts them for
// a symlink of the workspace itself, as a plain mount sets them.
func (v *overlayFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if v.readOnly {
		return experimentalsys.EROFS
	}
	p, e := v.resolve(0, p)
	if e != 0 {
		return e
	}
	p, dirOnly, e := clean(p)
	if e != 0 {
		return e
	}
	v.o.mu.Lock()
	defer v.o.mu.Unlock()
	en, e := v.o.lookup(p, false)
	switch {
	case e != 0:
		return e
	case en.n == nil && !dirOnly && !guestfs.Following(v.o.ctx) && v.lowerLink(p):
		// A symlink of the workspace, whose own times are set, as on a
		// plain mount, but for one with another name (EACCES).
		st, e := v.lower.Lstat(p)
		if e == 0 && st.Nlink > 1 {
			return experimentalsys.EACCES
		}
		return e
	case en.n == nil:
		// A workspace path the call has not changed: what it names must
		// be one the call may open, as on a plain mount (a file with
		// another name, or a special file, is EACCES).
		st, e := v.lower.Stat(slashed(p, dirOnly))
		switch {
		case e != 0:
			return e
		case st.Mode.IsDir():
			return 0
		case dirOnly:
			return experimentalsys.ENOTDIR
		case !st.Mode.IsRegular() || st.Nlink > 1:
			return experimentalsys.EACCES
		}
		return 0
	case en.n.kind == nodeGone:
		return experimentalsys.ENOENT
	case en.n.kind == nodeFile && dirOnly:
		// A path with a trailing slash names a directory, as utimensat(2)
		// takes it.
		return experimentalsys.ENOTDIR
	case en.n.kind == nodeFile:
		return v.o.errno(v.o.st.Chtimes(blobName(p), guestfs.Utime(atim), guestfs.Utime(mtim)))
	}
	return 0
}

// lowerLink reports whether p of the workspace is a symlink.
func (v *overlayFS) lowerLink(p string) bool {
	st, e := v.lower.Lstat(p)
	return e == 0 && st.Mode&fs.ModeSymlink != 0
}

// changing cleans the path of a change and locks the overlay; the caller
// unlocks it when the returned errno is zero. The mount's root is never
// changed: a change of it gets root, the errno its call gives for a
// directory it may not change (unlink(2) says EISDIR, rmdir(2) EINVAL).
// Nor is a path named like a temporary file of Apply (EACCES): see
// isReserved.
func (v *overlayFS) changing(p string, root experimentalsys.Errno) (string, experimentalsys.Errno) {
	if v.readOnly {
		return "", experimentalsys.EROFS
	}
	p, _, e := clean(p)
	if e != 0 {
		return "", e
	}
	switch {
	case p == ".":
		return "", root
	case isReserved(p):
		return "", experimentalsys.EACCES
	}
	v.o.mu.Lock()
	return p, 0
}

func isDir(f *guestfs.File) bool {
	d, _ := f.IsDir()
	return d
}
