package guestfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	pathpkg "path"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// Dir is the filesystem a guest sees at a mount. Every path
// resolves through an os.Root opened on the mount's host directory, so no
// path — `..`, absolute, or through a symlink — leads outside it.
//
// The rules, each enforced here rather than left to the guest:
//   - symlinks and hard links cannot be made (EPERM);
//   - symlinks already in the directory are followed only while they stay
//     inside it (os.Root's rule); one that points outside fails;
//   - only regular files and directories open: a FIFO, device or socket is
//     refused (EACCES) without blocking, since opening is non-blocking;
//   - a regular file with more than one hard link is refused (EACCES) for
//     reading, writing and setting times alike: its other name may be
//     outside the directory, and it is not truncated before it is refused;
//   - times are set through a descriptor, never by name, so they change the
//     file that was checked or opened, whatever is renamed meanwhile;
//   - a read-only mount refuses every call that would change anything (EROFS);
//   - a call holds at most Policy.MaxOpenFiles open files (EMFILE past it);
//   - once the call must stop (Ctx done), its files read and write nothing
//     more (EINTR): wazero reads and writes each of an fd_read's or
//     fd_write's iovecs with a call of its own, a system call each, in
//     the host, where no stop check runs, and a guest may pass millions.
type Dir struct {
	experimentalsys.UnimplementedFS
	Root     *os.Root
	ReadOnly bool
	Files    *Budget
	// Ctx is the call's; nil for a Dir that no call's end stops.
	Ctx context.Context
}

// Stopped reports whether the call using the directory must stop: its
// files' reads and writes are then EINTR.
func (w *Dir) Stopped() bool { return w.Ctx != nil && w.Ctx.Err() != nil }

// NewDir opens dir as a guest filesystem. The caller closes the
// returned closer when no instance uses the filesystem any more.
func NewDir(dir string, readOnly bool, files *Budget) (*Dir, error) {
	root, err := OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open mount %s: %w", dir, err)
	}
	return &Dir{Root: root, ReadOnly: readOnly, Files: files}, nil
}

// OpenRoot opens dir as an os.Root without ever waiting: os.OpenRoot
// opens its path to read, which for a FIFO put in the directory's place
// waits for a writer. It opens dir's "." instead, which resolves only
// through a directory: anything else fails at once (ENOTDIR), and in one
// open, so nothing can be swapped in between a check and the open.
func OpenRoot(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, &os.PathError{Op: "open", Path: dir, Err: syscall.ENOENT}
	}
	root, err := os.OpenRoot(dir + "/.")
	if pe, ok := err.(*os.PathError); ok {
		pe.Path = dir
	}
	return root, err
}

func (w *Dir) Close() error { return w.Root.Close() }

// newFileMode and newDirMode are the permissions of the files and
// directories a guest makes. WASI preview 1 carries no mode (wazero asks
// 0600 and 0700 for all of them), so a guest gets what a program asking
// the usual 0666 and 0777 gets under a umask of 022 — the process's own
// umask still applies — as changes applied from an overlay do.
const newFileMode, newDirMode fs.FileMode = 0o644, 0o755

const WriteFlags = experimentalsys.O_WRONLY | experimentalsys.O_RDWR | experimentalsys.O_APPEND |
	experimentalsys.O_CREAT | experimentalsys.O_TRUNC | experimentalsys.O_EXCL

// OpenFile opens a regular file or directory, within the call's budget of
// open files.
func (w *Dir) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if w.ReadOnly && flag&WriteFlags != 0 {
		return nil, experimentalsys.EROFS
	}
	asked := path
	path, e := w.resolve(0, path)
	if e != 0 {
		return nil, e
	}
	p, e := name(path)
	if e != 0 {
		return nil, e
	}
	if p == "." && flag == experimentalsys.O_RDONLY && asked == path {
		// wazero opens a mount's root so, once per instance, to ask
		// whether it is a directory; most calls use it for nothing else.
		return &File{FS: w, Path: ".", isDir: true}, 0
	}
	if e := w.TakeFile(); e != 0 {
		return nil, e
	}
	f, e := w.Open(path, flag, perm)
	if e != 0 {
		w.Files.Give()
		return nil, e
	}
	if f.isDir {
		if f.anchor = DirsOf(w.Ctx).Open(w, asked, p); f.anchor != nil {
			f.anchor.Dev, f.anchor.Ino = f.dev, f.ino
		}
	}
	return f, 0
}

// resolve is the i-th path a function of w's was handed, relative to the
// directory the guest opened that it names, where that directory is now
// (see Anchor): ENOENT when it is gone, removed or no longer where the
// guest last put it (moved by anyone else, in the mount or out of it).
func (w *Dir) resolve(i int, path string) (string, experimentalsys.Errno) {
	a, path, e := DirsOf(w.Ctx).Resolve(w, i, path)
	if a == nil || e != 0 {
		return path, e
	}
	return path, w.still(a)
}

// still is ENOENT unless a's directory is at a's At (which may be a
// symlink to it, as the path it was opened by may have been).
func (w *Dir) still(a *Anchor) experimentalsys.Errno {
	at, ok := a.At()
	if !ok {
		return experimentalsys.ENOENT
	}
	fi, err := w.Root.Stat(at)
	if err != nil {
		return experimentalsys.ENOENT
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || uint64(st.Dev) != a.Dev || st.Ino != a.Ino {
		return experimentalsys.ENOENT
	}
	return 0
}

// open opens without truncating, checks what it opened, and only then
// truncates: O_TRUNC in the open itself would empty a file this refuses,
// such as one whose other name is outside the mount. A file it creates
// gets newFileMode, whatever perm says (see newFileMode).
//
// It opens with O_NONBLOCK, so that opening a FIFO (refused once opened)
// does not wait for a writer, and leaves the flag set: what it keeps open
// is a regular file or a directory, whose reads and writes the kernel
// does not make non-blocking, so clearing it would cost two calls of the
// kernel a file for nothing. (Every file os.Root opens is offered to the
// runtime's poller, and epoll refuses a regular file: one failed
// epoll_ctl an open. Only a blocking descriptor given to os.NewFile is
// not offered, and os.Root gives out no descriptor.)
func (w *Dir) Open(path string, flag experimentalsys.Oflag, _ fs.FileMode) (*File, experimentalsys.Errno) {
	if flag&experimentalsys.O_CREAT != 0 && strings.HasSuffix(path, "/") {
		// open(2) on Linux: O_CREAT makes a file, which a name with a
		// trailing slash cannot be, whatever is there.
		return nil, experimentalsys.EISDIR
	}
	if e := w.noFollowLink(path, flag); e != 0 {
		return nil, e
	}
	path, e := name(path)
	if e != 0 {
		return nil, e
	}
	f, err := w.Root.OpenFile(path, OSFlags(flag&^experimentalsys.O_TRUNC)|syscall.O_NONBLOCK, newFileMode)
	if errors.Is(err, syscall.ENXIO) {
		// A FIFO with no reader, opened to write without blocking: it is
		// refused as every special file is.
		return nil, experimentalsys.EACCES
	}
	if err != nil {
		return nil, w.Errno(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, w.Errno(err)
	}
	if e := Allowed(fi); e != 0 {
		f.Close()
		return nil, e
	}
	if flag&experimentalsys.O_DIRECTORY != 0 && !fi.IsDir() {
		f.Close()
		return nil, experimentalsys.ENOTDIR
	}
	if flag&experimentalsys.O_TRUNC != 0 && fi.IsDir() {
		// Opened to read without it, as open(2) refuses it.
		f.Close()
		return nil, experimentalsys.EISDIR
	}
	if flag&experimentalsys.O_TRUNC != 0 && !fi.IsDir() {
		if e := w.truncate(f, fi, path, flag); e != 0 {
			f.Close()
			return nil, e
		}
	}
	nf := &File{F: f, FS: w, Path: path, isDir: fi.IsDir(), Append: flag&experimentalsys.O_APPEND != 0, Mode: fi.Mode().Perm()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		nf.dev, nf.ino = uint64(st.Dev), st.Ino
	}
	return nf, 0
}

// noFollowLink refuses an open with O_NOFOLLOW of a symlink, as open(2)
// does (os.Root would follow it): ELOOP, or ENOTDIR with O_DIRECTORY;
// unless a trailing slash asks for what it leads to or O_CREAT|O_EXCL
// asks for nothing to be there (EEXIST). Zero: the open goes on.
func (w *Dir) noFollowLink(path string, flag experimentalsys.Oflag) experimentalsys.Errno {
	excl := experimentalsys.O_CREAT | experimentalsys.O_EXCL
	if flag&experimentalsys.O_NOFOLLOW == 0 || flag&excl == excl || strings.HasSuffix(path, "/") {
		return 0
	}
	p, e := name(path)
	if e != 0 {
		return e
	}
	if fi, err := w.Root.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return 0
	}
	return NoFollowErrno(flag)
}

// NoFollowErrno is what open(2) answers an open with O_NOFOLLOW, and flag,
// of a symlink: ENOTDIR with O_DIRECTORY, else ELOOP.
func NoFollowErrno(flag experimentalsys.Oflag) experimentalsys.Errno {
	if flag&experimentalsys.O_DIRECTORY != 0 {
		return experimentalsys.ENOTDIR
	}
	return experimentalsys.ELOOP
}

// truncate empties f, opened and checked (fi) at path. Opened only to
// read (O_TRUNC with O_RDONLY, which empties the file, as open(2) on Linux
// and wazero's own directory mounts do), f cannot be truncated: a handle
// to write is opened beside it, and used only if it is the same file.
func (w *Dir) truncate(f *os.File, fi fs.FileInfo, path string, flag experimentalsys.Oflag) experimentalsys.Errno {
	if flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0 {
		return w.Errno(f.Truncate(0))
	}
	g, err := w.Root.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return w.Errno(err)
	}
	defer g.Close()
	gi, err := g.Stat()
	switch {
	case err != nil:
		return w.Errno(err)
	case !os.SameFile(fi, gi):
		// The path was given another file between the two opens.
		return experimentalsys.EAGAIN
	}
	return w.Errno(g.Truncate(0))
}

// allowed refuses what is not a regular file or a directory, and regular
// files that have another name.
func Allowed(fi fs.FileInfo) experimentalsys.Errno {
	switch {
	case fi.IsDir():
		return 0
	case !fi.Mode().IsRegular():
		return experimentalsys.EACCES
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return experimentalsys.EACCES
	}
	return 0
}

func OSFlags(flag experimentalsys.Oflag) int {
	var f int
	switch {
	case flag&experimentalsys.O_RDWR != 0:
		f = os.O_RDWR
	case flag&experimentalsys.O_WRONLY != 0:
		f = os.O_WRONLY
	default:
		f = os.O_RDONLY
	}
	for _, m := range []struct {
		from experimentalsys.Oflag
		to   int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND}, {experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL}, {experimentalsys.O_TRUNC, os.O_TRUNC},
		{experimentalsys.O_SYNC, os.O_SYNC}, {experimentalsys.O_DSYNC, syscall.O_DSYNC},
		{experimentalsys.O_NOFOLLOW, syscall.O_NOFOLLOW}, {experimentalsys.O_DIRECTORY, syscall.O_DIRECTORY},
	} {
		if flag&m.from != 0 {
			f |= m.to
		}
	}
	return f
}

// Lstat describes a path without following a final symlink.
func (w *Dir) Lstat(path string) (sys.Stat_t, experimentalsys.Errno) { return w.lstat(0, path) }

// lstat is Lstat of the i-th path of the function called.
func (w *Dir) lstat(i int, path string) (sys.Stat_t, experimentalsys.Errno) {
	return w.stat(i, path, w.Root.Lstat)
}

// Stat describes a path, following symlinks that stay inside the mount.
func (w *Dir) Stat(path string) (sys.Stat_t, experimentalsys.Errno) {
	return w.stat(0, path, w.Root.Stat)
}

// stat describes the i-th path of the function called with by (os.Root's
// Stat or Lstat).
func (w *Dir) stat(i int, path string, by func(string) (fs.FileInfo, error)) (sys.Stat_t, experimentalsys.Errno) {
	path, e := w.resolve(i, path)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	path, e = name(path)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	fi, err := by(path)
	if err != nil {
		return sys.Stat_t{}, w.Errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Readlink reads a symlink already in the mount; it does not follow it.
func (w *Dir) Readlink(path string) (string, experimentalsys.Errno) {
	path, e := w.resolve(0, path)
	if e != 0 {
		return "", e
	}
	path, e = name(path)
	if e != 0 {
		return "", e
	}
	s, err := w.Root.Readlink(path)
	return s, w.Errno(err)
}

// Mkdir makes a directory, with newDirMode whatever perm says (see
// newFileMode).
func (w *Dir) Mkdir(path string, _ fs.FileMode) experimentalsys.Errno {
	if w.ReadOnly {
		return experimentalsys.EROFS
	}
	path, e := w.resolve(0, path)
	if e != 0 {
		return e
	}
	path, e = name(path)
	if e != 0 {
		return e
	}
	return w.Errno(w.Root.Mkdir(path, newDirMode))
}

// Chmod changes permission bits.
func (w *Dir) Chmod(path string, perm fs.FileMode) experimentalsys.Errno {
	if w.ReadOnly {
		return experimentalsys.EROFS
	}
	path, e := w.resolve(0, path)
	if e != 0 {
		return e
	}
	path, e = name(path)
	if e != 0 {
		return e
	}
	return w.Errno(w.Root.Chmod(path, perm&fs.ModePerm))
}

// Rename renames within the mount. A directory replaces an empty
// directory, as rename(2) does (os.Root refuses that with EEXIST). As
// rename(2) says, a missing source is ENOENT whatever the target, and a
// source that is no directory (a file, a symlink) is ENOTDIR when either
// path has a trailing slash, even onto a directory; what is at the
// target refuses it next (see ontoKind). A symlink, or a directory
// holding one or more than maxMoveEntries entries, is renamed only within
// its own directory (see mayMove).
func (w *Dir) Rename(from, to string) experimentalsys.Errno {
	if w.ReadOnly {
		return experimentalsys.EROFS
	}
	from, e := w.resolve(0, from)
	if e != 0 {
		return e
	}
	to, e = w.resolve(1, to)
	if e != 0 {
		return e
	}
	slashed := strings.HasSuffix(from, "/") || strings.HasSuffix(to, "/")
	from, e = name(from)
	if e != 0 {
		return e
	}
	to, e = name(to)
	if e != 0 {
		return e
	}
	e = w.rename(from, to, slashed)
	if e == 0 {
		DirsOf(w.Ctx).Renamed(w, from, to)
	}
	return e
}

// rename renames from to to, both named for the mount (see Rename).
func (w *Dir) rename(from, to string, slashed bool) experimentalsys.Errno {
	fi, err := w.Root.Lstat(rel(strings.TrimRight(from, "/")))
	if err != nil {
		return w.Errno(err)
	}
	if slashed && !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	if e := w.ontoKind(fi, to); e != 0 {
		return e
	}
	if fi.IsDir() && w.intoItself(fi, to) {
		return experimentalsys.EINVAL
	}
	if e := w.mayMove(from, to); e != 0 {
		return e
	}
	if fi, err := w.Root.Lstat(to); err == nil && fi.IsDir() {
		return w.renameOverDir(from, to)
	}
	return w.Errno(w.Root.Rename(from, to))
}

// Rmdir removes an empty directory; a symlink named with a trailing
// slash is ENOTDIR (see slashedLink).
func (w *Dir) Rmdir(path string) experimentalsys.Errno {
	if w.ReadOnly {
		return experimentalsys.EROFS
	}
	path, e := w.resolve(0, path)
	if e != 0 {
		return e
	}
	path, e = name(path)
	if e != 0 {
		return e
	}
	if w.slashedLink(path) {
		return experimentalsys.ENOTDIR
	}
	fi, err := w.Root.Lstat(path)
	if err != nil {
		return w.Errno(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	if e := w.Errno(w.Root.Remove(path)); e != 0 {
		return e
	}
	DirsOf(w.Ctx).Removed(w, path)
	return 0
}

// Unlink removes a file (or a symlink, not what it points to); a symlink
// named with a trailing slash is ENOTDIR (see slashedLink).
func (w *Dir) Unlink(path string) experimentalsys.Errno {
	if w.ReadOnly {
		return experimentalsys.EROFS
	}
	path, e := w.resolve(0, path)
	if e != 0 {
		return e
	}
	path, e = name(path)
	if e != 0 {
		return e
	}
	if w.slashedLink(path) {
		return experimentalsys.ENOTDIR
	}
	fi, err := w.Root.Lstat(path)
	if err != nil {
		return w.Errno(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return w.Errno(w.Root.Remove(path))
}

// Link makes no hard link: one can give a file a second name that
// outlives the mount's rules. It answers first what linkat(2) answers
// on Linux before it would make one (see Unmade): the errno of looking up
// old (ENOENT when it is not there), then of new; then EROFS on a
// read-only mount, and EPERM.
func (w *Dir) Link(old, made string) experimentalsys.Errno {
	if _, e := w.lstat(0, old); e != 0 {
		return e
	}
	return w.unmade(1, made)
}

// Symlink makes no symlink: one made by a guest is how wazero's own
// directory mounts are escaped. It answers first what symlinkat(2)
// answers on Linux of the link's name before it would make one (see
// Unmade), then EROFS on a read-only mount, and EPERM.
func (w *Dir) Symlink(_, made string) experimentalsys.Errno { return w.unmade(1, made) }

// unmade is what Link and Symlink answer of made, the name they would
// make, the i-th path of the function called.
func (w *Dir) unmade(i int, made string) experimentalsys.Errno {
	lstat := func(p string) (sys.Stat_t, experimentalsys.Errno) { return w.stat(i, p, w.Root.Lstat) }
	stat := func(p string) (sys.Stat_t, experimentalsys.Errno) { return w.stat(i, p, w.Root.Stat) }
	if e := Unmade(made, lstat, stat); e != 0 {
		return e
	}
	if w.ReadOnly {
		return experimentalsys.EROFS
	}
	return experimentalsys.EPERM
}

// Unmade is what linkat(2) and symlinkat(2) answer on Linux of made, the
// name they would make, before they make it, for a filesystem that makes
// no links: EEXIST when lstat finds made, the errno of looking it up when
// that is not ENOENT (ENOTDIR under a file, EPERM for a path that leaves
// the mount, which says nothing of what is outside), ENOENT when made
// ends in a slash or its directory is not there, and ENOTDIR when that is
// not a directory; 0 when made could be made. Linux answers these before
// EROFS, and before the EPERM of a directory's hard link.
func Unmade(made string, lstat, stat func(string) (sys.Stat_t, experimentalsys.Errno)) experimentalsys.Errno {
	_, e := lstat(made)
	switch {
	case e == 0:
		return experimentalsys.EEXIST
	case e != experimentalsys.ENOENT:
		return e
	case strings.HasSuffix(made, "/"):
		return experimentalsys.ENOENT
	}
	st, e := stat(pathpkg.Dir(made))
	switch {
	case e != 0:
		return e
	case !st.Mode.IsDir():
		return experimentalsys.ENOTDIR
	}
	return 0
}

// Utimens sets access and modification times of a path, following a
// symlink only while it stays inside the mount (path_filestat_set_times
// with LOOKUP_SYMLINK_FOLLOW; without it, wazero opens the path and calls
// File.Utimens). It opens the path as a read does and sets the times
// through that descriptor, so the path passes the same checks as an open:
// a regular file with another name is refused (EACCES), since setting
// times by name would reach its other name outside the mount too, and
// what is checked is what is changed, whatever is renamed meanwhile.
// A file the guest may not read cannot have its times set either.
func (w *Dir) Utimens(path string, atim, mtim int64) experimentalsys.Errno {
	if w.ReadOnly {
		return experimentalsys.EROFS
	}
	path, e := w.resolve(0, path)
	if e != 0 {
		return e
	}
	if !Following(w.Ctx) {
		if e, link := w.linkUtimens(path, atim, mtim); link {
			return e
		}
	}
	f, e := w.Open(path, experimentalsys.O_RDONLY, 0)
	if e != 0 {
		return e
	}
	defer f.F.Close()
	return w.Errno(futimens(f.F, atim, mtim))
}

// linkUtimens sets the times of the symlink path names, not of what it
// leads to, as utimensat(2) with AT_SYMLINK_NOFOLLOW does, and reports
// whether path names one (it does nothing otherwise, nor for a path with a
// trailing slash, which names what a link leads to). It sets them by the
// link's own name in the directory holding it, opened through os.Root, so
// nothing is followed out of the mount, whatever the link's text; a link
// with another name, which may be outside the mount, is refused (EACCES),
// as a regular file with one is.
func (w *Dir) linkUtimens(path string, atim, mtim int64) (experimentalsys.Errno, bool) {
	if strings.HasSuffix(path, "/") {
		return 0, false
	}
	p, e := name(path)
	if e != 0 {
		return e, true
	}
	if fi, err := w.Root.Lstat(p); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return 0, false
	}
	d, err := w.Root.OpenFile(pathpkg.Dir(p), os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return w.Errno(err), true
	}
	defer d.Close()
	return w.Errno(lutimens(d, pathpkg.Base(p), atim, mtim)), true
}

func Utime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
