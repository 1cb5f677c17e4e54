package overlay

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cairnrun/cairn/internal/ctxio"
	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Overlay is a workspace as one tool call sees it. Reads fall through to
// the workspace; every change — a write, a new file, a truncation, a
// deletion, a directory made or removed, a rename — lands in a staging
// directory that belongs to the call, and the workspace does not change.
// After the call, Effects lists what it changed, Check says whether the
// workspace still matches what the call saw, and Apply makes the changes
// in the workspace, crash-safely and idempotently; Discard then removes
// the staging directory.
//
// Mount it with sandbox.Mount's Overlay field. It keeps every rule of the
// workspace filesystem (see sandbox.Policy's Mounts), on the workspace and on the staging
// directory alike, and adds its own:
//   - what the call has not changed is read from the workspace as it is
//     at the moment of the read;
//   - the first change of a path records its base: what the workspace held
//     there then (a file's sha256 and size, a directory, or nothing);
//   - symlinks already in the workspace are read through (while they stay
//     inside it) but never written through, replaced, removed or renamed
//     (EPERM), so that every effect names the path it really changes;
//   - a path named like a temporary file of Apply (.cairn-apply-…) is
//     never made, written, removed or renamed (EACCES), not even one a
//     crash left in the workspace: no effect names one;
//   - a rename copies: the old path is deleted and the new one written;
//     renaming a directory renames everything in it, or nothing when any
//     of it fails;
//   - file times and permissions are not effects: a changed file keeps its
//     permission, a new file gets 0644 and a new directory 0755;
//   - the staged bytes are bounded by Policy.StagingLimit, each changed
//     path costing a 4 KiB block of it besides its bytes, the changed
//     paths by Policy.MaxStagedPaths, and the bytes of their names by 4
//     MiB (maxNameBytes); past any of them a change fails before
//     anything is staged for it (EDQUOT, as past a quota),
//     Exhausted reports it and the call fails with ErrStagingLimit. A
//     staged file removed or replaced while the call holds it open stays
//     on disk, so its bytes stay charged until its last handle closes.
//
// An Overlay is for one call: mount it in one call at a time. Its methods
// are safe for concurrent use.
type Overlay struct {
	ws, st  *os.Root
	staging string
	// ctx is the context of the call the overlay is mounted in: its end
	// stops a copy of a workspace file (see copyLower).
	ctx context.Context

	mu sync.Mutex
	// Each map is made when first written: a call that reads, changes or
	// describes nothing makes none.
	nodes  map[string]*node           // paths the call changed, by clean slash path
	kids   map[string]map[string]bool // names in nodes, by their directory
	used   int64                      // bytes charged against limit: nodeCost a node, and every live blob's size
	limit  int64
	paths  int  // the bound on len(nodes)
	names  int  // the bytes of the paths in nodes, bounded by maxNameBytes
	full   bool // a change was refused for the limit
	ofPath bool // and the limit reached was paths
	ofName bool // or the bytes of their names
	closed bool
	// undo, while a directory is renamed, puts back each step taken so
	// far, last first (see renameDir); nil otherwise.
	undo   *[]func()
	reads  map[string]bool      // workspace files the call opened to read, unchanged
	whole  map[string]wholeRead // of reads, those read in one pass (see ReadWhole)
	looked map[string]bool      // workspace paths the call described or listed (see Seen)
	sight  sightBound           // the bound of looked and reads together
	// seenBytes is the length of the paths in looked and in reads.
	seenBytes int
	// overSeen: a read, description or listing was refused for sight.
	overSeen bool
	// noSpace is the system's error of the first change the staging
	// directory's disk had no room for (see errno), nil if none.
	noSpace atomic.Pointer[error]
}

type nodeKind uint8

const (
	nodeGone nodeKind = iota // removed by the call
	nodeFile                 // a file whose content is staged
	nodeDir                  // a directory the call made
)

// node is a path the call changed.
type node struct {
	kind nodeKind
	base Version
	mode fs.FileMode
	blob *blob // of a nodeFile
}

// blob is a staged file, shared by the handles open on it. It is live,
// its bytes on disk and its size charged against the staging limit, while
// a path holds it or a handle has it open: unlinking a file does not free
// its blocks while a descriptor holds it, so refunding it then would let a
// call fill the disk past the limit by writing, unlinking and keeping open.
type blob struct {
	size    int64
	handles int  // stagedFiles open on it
	orphan  bool // no path holds it: removed or replaced
}

// maxNameBytes bounds the bytes of the paths a call changes (in all,
// counted once each), whatever its limits: the effects list names each,
// and the record the host journals of the call holds that list twice and
// the paths of its bases once more, in a journal frame of at most 64 MiB.
// 10,000 paths of 400 bytes each fit it.
const maxNameBytes = 4 << 20

// nodeCost is charged against the staging limit for every path the call
// changes, so that a flood of empty files or directories is bounded too:
// a block, the least a staged file takes on disk.
const nodeCost = 4096

// New makes an overlay of the workspace directory, staging its
// changes in staging, which it creates private to the user (0700). The
// parent of staging must exist; staging itself must not, or be empty.
//
// With staging "", the overlay stages nothing and makes no directory: it
// is for a call that may only read, and only lists what it read. Its
// mount is read-only whatever the policy says.
//
// # Errors
//
// A workspace that cannot be opened, a staging directory that cannot be
// made or is not empty.
func New(workspace, staging string) (*Overlay, error) {
	if staging != "" {
		if err := makeStaging(staging); err != nil {
			return nil, err
		}
	}
	ws, err := guestfs.OpenRoot(workspace) // a FIFO in its place is refused, not waited on
	if err != nil {
		return nil, fmt.Errorf("overlay: open workspace: %w", err)
	}
	var st *os.Root
	if staging != "" {
		if st, err = os.OpenRoot(staging); err != nil {
			ws.Close()
			return nil, fmt.Errorf("overlay: open staging: %w", err)
		}
	}
	return &Overlay{ws: ws, st: st, staging: staging, ctx: context.Background(), limit: guestfs.DefaultStagingLimit, paths: guestfs.DefaultMaxStagedPaths,
		sight: sightBound{paths: maxSeenPaths, bytes: maxSeenBytes}}, nil
}

func makeStaging(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if !errors.Is(err, fs.ErrExist) {
		if err != nil {
			return fmt.Errorf("overlay: make staging: %w", err)
		}
		return nil
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("overlay: staging: %w", err)
	}
	if len(names) > 0 {
		return fmt.Errorf("overlay: staging directory %s is not empty", dir)
	}
	return os.Chmod(dir, 0o700)
}

// Close releases the overlay's directories. The staging directory stays
// until Discard.
func (o *Overlay) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	if o.st == nil {
		return o.ws.Close()
	}
	return errors.Join(o.ws.Close(), o.st.Close())
}

// Discard removes a staging directory and everything in it. Call it once
// the call's effects are applied and that is journaled, or when they are
// dropped. A directory that is already gone is not an error.
func Discard(staging string) error {
	if err := os.RemoveAll(staging); err != nil {
		return fmt.Errorf("discard staging: %w", err)
	}
	return nil
}

// Mount is the overlay as one mount of one call sees it: the filesystem
// the guest is given, files opened within the call's budget, staging
// within limit. A change that copies or hashes a workspace file stops
// when ctx, the call's, is done, and fails (EINTR) having changed
// nothing; reads and writes of its files fail so too (see guestfs.Dir).
// It is the sandbox's, which calls it for a Mount with an
// Overlay; the package's other users have no use for it.
func (o *Overlay) Mount(ctx context.Context, readOnly bool, files *guestfs.Budget, limit guestfs.StagingLimit) (experimentalsys.FS, func() error, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, nil, errors.New("mount a closed overlay")
	}
	o.ctx, o.limit, o.paths = ctx, limit.Bytes, limit.Paths
	readOnly = readOnly || o.st == nil
	v := &overlayFS{o: o, readOnly: readOnly, files: files,
		lower:   guestfs.Dir{Root: o.ws, ReadOnly: true, Files: files, Ctx: ctx},
		staging: guestfs.Dir{Root: o.st, ReadOnly: readOnly, Files: files, Ctx: ctx}}
	return v, func() error { return nil }, nil
}

// lowerKind is what the workspace holds at a path the call has not changed.
type lowerKind uint8

const (
	lowerAbsent lowerKind = iota
	lowerFile
	lowerDir
	lowerLink
	lowerOther // a special file, or a file with more than one name
)

func kindOf(fi fs.FileInfo) lowerKind {
	switch {
	case fi.IsDir():
		return lowerDir
	case fi.Mode()&fs.ModeSymlink != 0:
		return lowerLink
	case guestfs.Allowed(fi) != 0:
		return lowerOther
	}
	return lowerFile
}

func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// lowerAt says what the workspace holds at p, without following a final
// symlink.
func (o *Overlay) lowerAt(p string) (lowerKind, experimentalsys.Errno) {
	fi, err := o.ws.Lstat(p)
	switch {
	case notExist(err):
		return lowerAbsent, 0
	case err != nil:
		return 0, o.errno(err)
	}
	return kindOf(fi), 0
}

// entry is what a path is in the call's view: a node when the call changed
// it, else what the workspace holds (known only for lookups that write).
type entry struct {
	n     *node
	lower lowerKind
}

func (e entry) exists() bool {
	if e.n != nil {
		return e.n.kind != nodeGone
	}
	return e.lower != lowerAbsent
}

func (e entry) isDir() bool {
	if e.n != nil {
		return e.n.kind == nodeDir
	}
	return e.lower == lowerDir
}

// lookup resolves a clean path in the call's view. A path under one the
// call removed or made a file does not exist. For a change (write), every
// directory on the way must be a real directory: a symlink is refused with
// EPERM, so that no change lands anywhere but at its own path.
func (o *Overlay) lookup(p string, write bool) (entry, experimentalsys.Errno) {
	for _, a := range ancestors(p) {
		if n, ok := o.nodes[a]; ok {
			switch n.kind {
			case nodeGone:
				return entry{}, experimentalsys.ENOENT
			case nodeFile:
				return entry{}, experimentalsys.ENOTDIR
			}
			continue
		}
		if !write {
			continue
		}
		switch k, e := o.lowerAt(a); {
		case e != 0:
			return entry{}, e
		case k == lowerLink:
			return entry{}, experimentalsys.EPERM
		case k == lowerAbsent:
			return entry{}, experimentalsys.ENOENT
		case k != lowerDir:
			return entry{}, experimentalsys.ENOTDIR
		}
	}
	if n, ok := o.nodes[p]; ok {
		return entry{n: n}, 0
	}
	if isReserved(p) {
		// Apply's temporary file of another call's change: not part of
		// the workspace (see list), and no call may make one.
		if write {
			return entry{}, experimentalsys.EACCES
		}
		return entry{}, experimentalsys.ENOENT
	}
	if !write || p == "." {
		return entry{lower: lowerDir}, 0
	}
	k, e := o.lowerAt(p)
	return entry{lower: k}, e
}

// setNode records a change of p, charging a new path against the limit.
func (o *Overlay) setNode(p string, n *node) experimentalsys.Errno {
	if _, ok := o.nodes[p]; !ok {
		if e := o.admits(1, len(p)); e != 0 {
			return e
		}
		if e := o.charge(nodeCost); e != 0 {
			return e
		}
		if o.nodes == nil {
			o.nodes, o.kids = map[string]*node{}, map[string]map[string]bool{}
		}
		o.names += len(p)
		dir := path.Dir(p)
		if o.kids[dir] == nil {
			o.kids[dir] = map[string]bool{}
		}
		o.kids[dir][path.Base(p)] = true
		o.undoable(func() {
			delete(o.nodes, p)
			delete(o.kids[dir], path.Base(p))
			o.used, o.names = o.used-nodeCost, o.names-len(p)
		})
	} else {
		old := o.nodes[p]
		o.undoable(func() { o.nodes[p] = old })
	}
	o.nodes[p] = n
	return 0
}

// undoable notes how to put back a step of a directory's rename, while
// one is under way (see renameDir).
func (o *Overlay) undoable(step func()) {
	if o.undo != nil {
		*o.undo = append(*o.undo, step)
	}
}

// remember notes n, a node the call changed before, as it is before it
// changes again, so that a directory's rename that fails puts it back.
func (o *Overlay) remember(n *node) {
	if o.undo != nil {
		was := *n
		o.undoable(func() { *n = was })
	}
}

// baseOf is the base of a path the call is about to change that the
// workspace holds nothing at (or the call removed).
func baseOf(en entry) (Version, fs.FileMode) {
	if en.n != nil {
		return en.n.base, en.n.mode
	}
	return Version{}, 0
}

// errno is the errno the guest gets for err, an error of the staging
// directory or the workspace. A disk with no room (ENOSPC, EDQUOT) is
// recorded for Exhausted too: the call fails with ErrNoSpace.
func (o *Overlay) errno(err error) experimentalsys.Errno {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		o.noSpace.CompareAndSwap(nil, &err)
	}
	return guestfs.ErrnoIn(o.ctx, err)
}

// refuse records that the call was refused a change past its staging
// limits, and is the errno the change gets: EIO, which wazero's set
// answers, told to the call's WASI function as EDQUOT (see
// guestfs.Unnamed), which is what the guest sees, as write(2), open(2)
// and mkdir(2) answer past a user's quota of blocks or inodes. Exhausted
// says why. The caller holds o.mu.
func (o *Overlay) refuse() experimentalsys.Errno {
	o.full = true
	if u := guestfs.UnnamedOf(o.ctx); u != nil {
		u.Tell(syscall.EDQUOT)
	}
	return errFull
}

// errFull is the errno of a change past the staging limits (see refuse),
// and of a read or description past what the overlay records as seen,
// which the guest sees as EIO.
const errFull = experimentalsys.EIO

// Reads lists, sorted, the workspace files the call opened to read while
// they were unchanged by it (slash paths relative to the workspace). It is
// bounded with Seen: past the bound an open is refused rather than left
// out, and the call fails with ErrSeenLimit (see Exhausted), so Reads is
// every file the call read.
func (o *Overlay) Reads() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.reads))
	for p := range o.reads {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Exhausted is ErrNoSpace when the staging directory's disk had no room
// for a change of the call's; else ErrStagingLimit, saying which limit, when the call was
// refused a change because it reached Policy.StagingLimit,
// Policy.MaxStagedPaths or the bound of the bytes of the names of the
// paths it changes; else ErrSeenLimit when it was refused a read,
// description or listing because the overlay could record no more of
// what it saw (see Reads and Seen); else nil. Either way the call must fail: it did
// not do what it meant to, or cannot be recorded as it ran.
func (o *Overlay) Exhausted() error {
	if err := o.noSpace.Load(); err != nil {
		var errno syscall.Errno
		errors.As(*err, &errno)
		return fmt.Errorf("%w (%v): a change the call made could not be staged; free space on the disk of the agent's store, then make the call again", ErrNoSpace, errno)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case !o.full:
		return o.seenExhausted()
	case o.ofPath:
		return fmt.Errorf("%w: the call tried to change more than %d paths of the workspace (MaxStagedPaths)", ErrStagingLimit, o.paths)
	case o.ofName:
		return nameLimitError(fmt.Sprintf("%v: the call tried to change paths of the workspace whose names come to more than %d MiB, more than the record of one call holds", ErrStagingLimit, maxNameBytes>>20))
	}
	size := fmt.Sprintf("%d bytes", o.limit)
	if o.limit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", o.limit>>20)
	}
	return fmt.Errorf("%w: the call tried to stage more than %s of changes, at least 4 KiB a path (StagingLimit)", ErrStagingLimit, size)
}

// mayChange checks, before anything is staged for it, that the call may
// change p: a refused change then costs no file made and removed.
func (o *Overlay) mayChange(p string) experimentalsys.Errno {
	if _, ok := o.nodes[p]; ok {
		return 0
	}
	if e := o.admits(1, len(p)); e != 0 {
		return e
	}
	if nodeCost > o.limit-o.used {
		return o.refuse()
	}
	return 0
}

// admits checks that the call may change n more paths, whose names come
// to bytes bytes.
func (o *Overlay) admits(n, bytes int) experimentalsys.Errno {
	switch {
	case len(o.nodes)+n > o.paths:
		o.ofPath = true
		return o.refuse()
	case bytes > maxNameBytes-o.names:
		o.ofName = true
		return o.refuse()
	}
	return 0
}

func (o *Overlay) charge(n int64) experimentalsys.Errno {
	if o.used+n > o.limit {
		return o.refuse()
	}
	o.used += n
	return 0
}

// room is how many of n bytes written at off may be written to b: all of
// those within its size, and as many past it as the staging limit has
// left. A write whose end would pass the largest file offset is EINVAL,
// as write(2) says, before it could overflow the count of staged bytes.
// A negative offset is left for the host to refuse.
func (o *Overlay) room(b *blob, off int64, n int) (int, experimentalsys.Errno) {
	switch {
	case n == 0 || off < 0:
		return n, 0
	case off > math.MaxInt64-int64(n):
		return 0, experimentalsys.EINVAL
	}
	growth := off + int64(n) - b.size
	if growth <= 0 {
		return n, 0
	}
	if left := max(o.limit-o.used, 0); growth > left {
		if growth-left >= int64(n) {
			return 0, o.refuse()
		}
		n -= int(growth - left)
	}
	return n, 0
}

// resized records that b is now size bytes long.
func (o *Overlay) resized(b *blob, size int64) {
	o.used += size - b.size
	b.size = size
}

// hold notes a handle opened on b.
func (o *Overlay) hold(b *blob) { b.handles++ }

// release notes a handle on b closed, which refunds b if it was the last
// one and no path holds b.
func (o *Overlay) release(b *blob) {
	b.handles--
	o.refund(b)
}

// drop notes that no path holds b any more: it is refunded now if no
// handle holds it either, else when the last one closes.
func (o *Overlay) drop(b *blob) {
	if b != nil && !b.orphan {
		b.orphan = true
		o.refund(b)
	}
}

// refund gives b's bytes back to the staging limit once nothing holds it.
// It happens once: drop marks b orphan once, and after that only the
// close of its last handle finds no handle left.
func (o *Overlay) refund(b *blob) {
	if b.orphan && b.handles == 0 {
		o.used -= b.size
	}
}

// copyLower copies the workspace's file at p to be the staged file of dst
// (when keep; else only hashes it) and returns p's version and permission.
// The copy replaces dst's staged file whole, so a handle still open on
// that one keeps it. The file may be far larger than anything the call
// may stage (a file hashed to be removed is not staged), so the copy
// stops between two chunks once the call's context is done: EINTR, and
// nothing is staged, which the call's end at its deadline then reports.
func (o *Overlay) copyLower(p, dst string, keep bool) (Version, fs.FileMode, experimentalsys.Errno) {
	src, err := o.ws.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Version{}, 0, o.errno(err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return Version{}, 0, o.errno(err)
	}
	if fi.IsDir() {
		return Version{}, 0, experimentalsys.EISDIR
	}
	if e := guestfs.Allowed(fi); e != 0 {
		return Version{}, 0, e
	}
	var w io.Writer = io.Discard
	if keep {
		if fi.Size() > o.limit-o.used {
			return Version{}, 0, o.refuse()
		}
		tmp := blobName(dst) + ".copy"
		f, err := o.st.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
		if err != nil {
			return Version{}, 0, o.errno(err)
		}
		defer func() {
			f.Close()
			o.st.Remove(tmp)
		}()
		w = f
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, w), ctxio.NewReader(o.ctx, src))
	switch {
	case o.ctx.Err() != nil:
		return Version{}, 0, experimentalsys.EINTR
	case err != nil:
		return Version{}, 0, o.errno(err)
	}
	if keep {
		if err := o.st.Rename(blobName(dst)+".copy", blobName(dst)); err != nil {
			return Version{}, 0, o.errno(err)
		}
	}
	return fileVersion(h.Sum(nil), n), fi.Mode().Perm(), 0
}

// hashLower is the version and permission of the workspace's file at p.
func (o *Overlay) hashLower(p string) (Version, fs.FileMode, experimentalsys.Errno) {
	return o.copyLower(p, "", false)
}

// copyUp stages the workspace's file at p, whole or (trunc) empty, and
// records its base.
func (o *Overlay) copyUp(p string, trunc bool) (*node, experimentalsys.Errno) {
	if e := o.mayChange(p); e != 0 {
		return nil, e
	}
	v, mode, e := o.copyLower(p, p, !trunc)
	if e == 0 && trunc {
		e = o.createBlob(p, mode)
	}
	if e != 0 {
		return nil, e
	}
	size := v.Size
	if trunc {
		size = 0
	}
	n := &node{kind: nodeFile, base: v, mode: mode, blob: &blob{size: size}}
	o.used += size
	if e := o.setNode(p, n); e != 0 {
		o.st.Remove(blobName(p))
		o.used -= size
		return nil, e
	}
	return n, 0
}

// create makes an empty staged file at p, where the call's view holds
// nothing. A file removed and made again keeps its permission.
func (o *Overlay) create(p string, en entry) (*node, experimentalsys.Errno) {
	if e := o.mayChange(p); e != 0 {
		return nil, e
	}
	base, mode := baseOf(en)
	if !base.IsFile() {
		mode = 0o644
	}
	if e := o.createBlob(p, mode); e != 0 {
		return nil, e
	}
	n := &node{kind: nodeFile, base: base, mode: mode, blob: &blob{}}
	if e := o.setNode(p, n); e != 0 {
		o.st.Remove(blobName(p))
		return nil, e
	}
	return n, 0
}

func (o *Overlay) createBlob(p string, mode fs.FileMode) experimentalsys.Errno {
	f, err := o.st.OpenFile(blobName(p), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return o.errno(err)
	}
	return o.errno(f.Close())
}

// dirEntry is one name in a directory of the call's view.
type dirEntry struct {
	name    string
	kind    lowerKind
	mode    fs.FileMode // type bits
	ino     uint64
	size    int64 // of a workspace file
	changed bool  // by the call
}

// list is the directory p of the call's view: the workspace's entries the
// call has not changed, and the ones it has, minus what it removed, by name.
func (o *Overlay) list(p string) ([]dirEntry, experimentalsys.Errno) {
	var out []dirEntry
	if n := o.nodes[p]; n == nil || n.base.Dir {
		f, err := o.ws.Open(p)
		switch {
		case err == nil:
			if e := o.saw(p + "/"); e != 0 {
				f.Close()
				return nil, e
			}
			fis, err := f.Readdir(-1)
			f.Close()
			if err != nil {
				return nil, o.errno(err)
			}
			for _, fi := range fis {
				// Apply's temporary files are there only while another
				// call's changes are applied (or a process killed then
				// left one, which its resume replaces): no call sees them.
				if isReserved(fi.Name()) {
					continue
				}
				if _, changed := o.nodes[join(p, fi.Name())]; !changed {
					out = append(out, dirEntry{name: fi.Name(), kind: kindOf(fi), mode: fi.Mode().Type(), ino: inodeOf(fi), size: fi.Size()})
				}
			}
		case !notExist(err):
			return nil, o.errno(err)
		}
	}
	for name := range o.kids[p] {
		c := join(p, name)
		switch o.nodes[c].kind {
		case nodeFile:
			out = append(out, dirEntry{name: name, kind: lowerFile, ino: syntheticIno(c), changed: true})
		case nodeDir:
			out = append(out, dirEntry{name: name, kind: lowerDir, mode: fs.ModeDir, ino: syntheticIno(c), changed: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, 0
}

func inodeOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// syntheticIno numbers what the call made, which has no inode of its own
// in the workspace.
func syntheticIno(p string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(p))
	return h.Sum64() | 1
}

// join is the path of name in directory dir.
func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// ancestors are the directories above p, outermost first ("a", "a/b" for
// "a/b/c").
func ancestors(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// isReserved reports whether p is named like a temporary file of Apply,
// which a call may not make, write, remove or rename (EACCES): an effect
// naming one makes the whole manifest invalid, and Apply refuses all of
// the call's changes. One a crash left in the workspace is read like any
// file, and the next Apply of that path removes it.
func isReserved(p string) bool { return IsApplyTemp(path.Base(p)) }

// clean makes a guest's path a clean path relative to the workspace, and
// says whether it asked for a directory (a trailing slash). A path too
// long, or with a name too long, is refused at once with ENAMETOOLONG, as
// guestfs.Dir refuses it (guestfs.CheckPath). Leading slashes are
// dropped, as guestfs.Dir drops them. A path leading out is refused with
// EPERM, as os.Root refuses it.
func clean(p string) (string, bool, experimentalsys.Errno) {
	if e := guestfs.CheckPath(p); e != 0 {
		return "", false, e
	}
	p = strings.TrimLeft(p, "/")
	if p == "" {
		return ".", true, 0
	}
	c := path.Clean(p)
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", false, experimentalsys.EPERM
	}
	return c, strings.HasSuffix(p, "/"), 0
}
