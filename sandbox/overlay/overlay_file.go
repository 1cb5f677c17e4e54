package overlay

import (
	"io"
	"io/fs"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// stagedFile is an open file the call has changed: its staged copy, whose
// growth is charged against the overlay's staging limit.
type stagedFile struct {
	*guestfs.File
	o   *Overlay
	b   *blob
	ino uint64 // the path's, as its directory lists it (see syntheticIno)
	// closed guards against releasing b twice.
	closed bool
}

// Stat describes the staged file, under the inode its directory lists.
func (s *stagedFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	st, e := s.File.Stat()
	st.Ino = s.ino
	return st, e
}

// Ino is the inode its directory lists.
func (s *stagedFile) Ino() (sys.Inode, experimentalsys.Errno) { return s.ino, 0 }

// Write writes at the offset (or the end, when appending), short or not at
// all past the staging limit.
func (s *stagedFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if e := s.Writable(); e != 0 {
		return 0, e
	}
	if s.FS.Stopped() {
		return 0, experimentalsys.EINTR
	}
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	off := s.b.size
	if !s.Append {
		var err error
		if off, err = s.F.Seek(0, io.SeekCurrent); err != nil {
			return 0, s.o.errno(err)
		}
	}
	n, e := s.o.room(s.b, off, len(buf))
	if e != 0 {
		return 0, e
	}
	n, err := s.F.Write(buf[:n])
	s.grew(off, n)
	return n, s.o.errno(err)
}

// Pwrite writes at an offset (at the end, when appending, as pwrite(2)
// does on Linux), short or not at all past the staging limit. A negative
// offset is EINVAL, as pwrite(2) says (see guestfs.File.Pread).
func (s *stagedFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if e := s.Writable(); e != 0 {
		return 0, e
	}
	switch {
	case off < 0:
		return 0, experimentalsys.EINVAL
	case s.FS.Stopped():
		return 0, experimentalsys.EINTR
	}
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	at := off
	if s.Append {
		at = s.b.size
	}
	n, e := s.o.room(s.b, at, len(buf))
	if e != 0 {
		return 0, e
	}
	if s.Append {
		n, err := guestfs.PwriteAppend(s.F, buf[:n], off)
		s.grew(at, n)
		return n, s.o.errno(err)
	}
	n, err := s.F.WriteAt(buf[:n], off)
	s.grew(off, n)
	return n, s.o.errno(err)
}

// grew records that n bytes were written at off, which room let fit: the
// file grows only by what was written, and a write that wrote nothing
// grows it not at all, whatever its offset.
func (s *stagedFile) grew(off int64, n int) {
	if n <= 0 {
		return
	}
	if end := off + int64(n); end > s.b.size {
		s.o.resized(s.b, end)
	}
}

// Truncate sets the file's size within the staging limit.
func (s *stagedFile) Truncate(size int64) experimentalsys.Errno {
	if e := s.Writable(); e != 0 {
		return e
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	if size > s.b.size && size-s.b.size > s.o.limit-s.o.used {
		return s.o.refuse()
	}
	if err := s.F.Truncate(size); err != nil {
		return s.o.errno(err)
	}
	s.o.resized(s.b, size)
	return 0
}

// Close closes the staged file. Closing the last handle of a file that
// no path holds any more gives its bytes back to the staging limit: only
// now are they freed on disk.
func (s *stagedFile) Close() experimentalsys.Errno {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	e := s.File.Close()
	if !s.closed {
		s.closed = true
		s.o.release(s.b)
	}
	return e
}

// Utimens is accepted; times are not effects.
func (s *stagedFile) Utimens(int64, int64) experimentalsys.Errno {
	if s.FS.ReadOnly {
		return experimentalsys.EROFS
	}
	return 0
}

// overlayDir is an open directory of the call's view. It lists the
// workspace's entries the call has not changed and those it has, minus
// what it removed; the listing is taken at the first Readdir after opening
// or rewinding. Once the call has removed it (or put anything else at its
// path since it was opened), it lists nothing: ENOENT, as getdents(2) of
// a removed directory says.
type overlayDir struct {
	experimentalsys.UnimplementedFile
	v     *overlayFS
	path  string
	node  *node         // the call's change of path when it was opened, nil for none
	lower *guestfs.File // the workspace's directory; nil for one the call made
	ents  []experimentalsys.Dirent
	read  bool
	// root is the mount's root, unchanged: it is not held open but
	// described through the workspace's root (see openRead).
	root bool
	// closed guards against giving the open-file budget back twice.
	closed bool
	// anchor follows the directory the guest opened through renames (see
	// guestfs.Anchor); nil for the root.
	anchor *guestfs.Anchor
}

// Dev is the device of the directory.
func (d *overlayDir) Dev() (uint64, experimentalsys.Errno) {
	st, e := d.Stat()
	return st.Dev, e
}

// Ino is the inode of the directory.
func (d *overlayDir) Ino() (sys.Inode, experimentalsys.Errno) {
	st, e := d.Stat()
	return st.Ino, e
}

// IsDir reports true.
func (d *overlayDir) IsDir() (bool, experimentalsys.Errno) { return true, 0 }

// IsAppend reports false.
func (d *overlayDir) IsAppend() bool { return false }

// SetAppend is refused for a directory.
func (d *overlayDir) SetAppend(bool) experimentalsys.Errno { return experimentalsys.EISDIR }

// IsNonblock reports false.
func (d *overlayDir) IsNonblock() bool { return false }

// SetNonblock has no effect.
func (d *overlayDir) SetNonblock(bool) experimentalsys.Errno { return 0 }

// Poll reports the directory ready (see guestfs.File.Poll).
func (d *overlayDir) Poll(experimentalsys.Pflag, int32) (bool, experimentalsys.Errno) { return true, 0 }

// Stat describes the directory.
func (d *overlayDir) Stat() (sys.Stat_t, experimentalsys.Errno) {
	switch {
	case d.lower != nil:
		return d.lower.Stat()
	case d.root:
		return d.v.lower.Stat(".")
	}
	return dirStat(d.path), 0
}

// Read is refused for a directory.
func (d *overlayDir) Read([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EISDIR }

// Pread is refused for a directory.
func (d *overlayDir) Pread([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EISDIR
}

// Write is EBADF, as write(2) of a directory answers: one is never open
// for writing (see guestfs.File.Writable).
func (d *overlayDir) Write([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EBADF }

// Pwrite is EBADF, as Write.
func (d *overlayDir) Pwrite([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EBADF
}

// Truncate is EINVAL, as ftruncate(2) of a directory answers (see
// guestfs.File.Truncate).
func (d *overlayDir) Truncate(int64) experimentalsys.Errno { return experimentalsys.EINVAL }

// Seek rewinds the listing; a directory has no other offset (see
// guestfs.SeekOffset).
func (d *overlayDir) Seek(offset guestfs.SeekOffset, whence int) (int64, experimentalsys.Errno) {
	if offset != 0 || whence != io.SeekStart {
		return 0, experimentalsys.EISDIR
	}
	d.read, d.ents = false, nil
	return 0, 0
}

// Readdir reads up to n entries (all when n <= 0).
func (d *overlayDir) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if !d.read {
		if e := d.list(); e != 0 {
			return nil, e
		}
	}
	if n <= 0 || n > len(d.ents) {
		n = len(d.ents)
	}
	out := d.ents[:n]
	d.ents = d.ents[n:]
	return out, 0
}

func (d *overlayDir) list() experimentalsys.Errno {
	d.v.o.mu.Lock()
	defer d.v.o.mu.Unlock()
	at, ok := d.path, true
	if d.anchor != nil {
		at, ok = d.anchor.At()
	}
	if !ok {
		return experimentalsys.ENOENT
	}
	if n := d.v.o.nodes[at]; at == d.path && (n != d.node || n != nil && n.kind != nodeDir) {
		return experimentalsys.ENOENT
	}
	ents, e := d.v.o.list(at)
	if e != 0 {
		return e
	}
	d.ents = make([]experimentalsys.Dirent, 0, len(ents))
	for _, en := range ents {
		d.ents = append(d.ents, experimentalsys.Dirent{Name: en.name, Ino: en.ino, Type: en.mode & fs.ModeType})
	}
	d.read = true
	return 0
}

// Sync has nothing to flush: the directory changes when the call's
// effects are applied.
func (d *overlayDir) Sync() experimentalsys.Errno { return 0 }

// Datasync has nothing to flush.
func (d *overlayDir) Datasync() experimentalsys.Errno { return 0 }

// Utimens is accepted; times are not effects.
func (d *overlayDir) Utimens(int64, int64) experimentalsys.Errno {
	if d.v.readOnly {
		return experimentalsys.EROFS
	}
	return 0
}

// Close closes the directory and returns it to the call's budget.
func (d *overlayDir) Close() experimentalsys.Errno {
	if d.closed {
		return 0
	}
	d.closed = true
	guestfs.DirsOf(d.v.o.ctx).Close(d.anchor)
	if d.lower != nil {
		return d.lower.Close()
	}
	d.v.files.Give()
	return 0
}
