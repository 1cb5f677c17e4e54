package overlay

import (
	"crypto/sha256"
	"hash"
	"io"
	"io/fs"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// readFile is a workspace file the call opened to read. While the call
// reads it from its start straight through, it hashes what the reads
// return; the read that meets the end makes that the content the call
// read (see Overlay.ReadWhole). A read at an offset or a seek elsewhere
// ends the hashing, and the host hashes the file itself.
type readFile struct {
	*guestfs.File
	o    *Overlay
	path string
	h    hash.Hash // nil once the reads are not one pass from the start
	size int64
	sum  [sha256.Size]byte // where h's sum is made, which then allocates nothing
}

func (v *overlayFS) newReadFile(f *guestfs.File, p string) *readFile {
	return &readFile{File: f, o: v.o, path: p, h: sha256.New()}
}

// Read reads on from the offset, hashing what it returns.
func (r *readFile) Read(buf []byte) (int, experimentalsys.Errno) {
	n, e := r.File.Read(buf)
	switch {
	case r.h == nil:
	case e != 0:
		r.h = nil
	case n > 0:
		r.h.Write(buf[:n])
		r.size += int64(n)
	case len(buf) > 0:
		r.o.readWhole(r.path, fileVersion(r.h.Sum(r.sum[:0]), r.size), r.Mode)
		r.h = nil
	}
	return n, e
}

// Pread reads at an offset, which ends the hashing.
func (r *readFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	r.h = nil
	return r.File.Pread(buf, off)
}

// Seek moves the offset; asking where it is does not end the hashing.
func (r *readFile) Seek(offset guestfs.SeekOffset, whence int) (int64, experimentalsys.Errno) {
	if offset != 0 || whence != io.SeekCurrent {
		r.h = nil
	}
	return r.File.Seek(offset, whence)
}

// wholeRead is the content of a file the call read whole, and its mode.
type wholeRead struct {
	v    Version
	mode fs.FileMode
	// mixed: reads of it ended on different contents.
	mixed bool
}

// noteRead notes that the call opened the workspace file p to read,
// unchanged (see Reads). Past the bound of what the overlay records of
// what the call saw it fails (EIO) and the call with it, as saw does: a
// read left out of Reads would be a read the file pool and a verify know
// nothing of. The caller holds o.mu.
func (o *Overlay) noteRead(p string) experimentalsys.Errno {
	if o.reads[p] {
		return 0
	}
	if !o.sightRoom(p) {
		return errFull
	}
	if o.reads == nil {
		o.reads = map[string]bool{}
	}
	o.reads[p] = true
	o.seenBytes += len(p)
	return 0
}

// readWhole notes that the call read p, in one pass to its end, as v.
func (o *Overlay) readWhole(p string, v Version, mode fs.FileMode) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.whole[p]; ok {
		w.mixed = w.mixed || w.v != v
		o.whole[p] = w
		return
	}
	if o.whole == nil {
		o.whole = map[string]wholeRead{}
	}
	o.whole[p] = wholeRead{v: v, mode: mode}
}

// ReadWhole is the content of the workspace file p, one of Reads, as the
// call read it, with the permissions the file had when opened: known
// when the call read it in one pass from its start to its end (as most
// programs read a file), and every such pass met the same content.
func (o *Overlay) ReadWhole(p string) (Version, fs.FileMode, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.whole[p]
	if !ok || w.mixed || !o.reads[p] {
		return Version{}, 0, false
	}
	return w.v, w.mode, true
}
