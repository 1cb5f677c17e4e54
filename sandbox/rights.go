package sandbox

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/tetratelabs/wazero/api"
)

// WASI preview 1's rights, the ones cairn checks or reports.
const (
	rightFdDatasync          uint64 = 1 << 0
	rightFdRead              uint64 = 1 << 1
	rightFdSeek              uint64 = 1 << 2
	rightFdFdstatSetFlags    uint64 = 1 << 3
	rightFdSync              uint64 = 1 << 4
	rightFdTell              uint64 = 1 << 5
	rightFdWrite             uint64 = 1 << 6
	rightFdAdvise            uint64 = 1 << 7
	rightFdAllocate          uint64 = 1 << 8
	rightPathCreateDirectory uint64 = 1 << 9
	rightPathCreateFile      uint64 = 1 << 10
	rightPathLinkSource      uint64 = 1 << 11
	rightPathLinkTarget      uint64 = 1 << 12
	rightPathOpen            uint64 = 1 << 13
	rightFdReaddir           uint64 = 1 << 14
	rightPathReadlink        uint64 = 1 << 15
	rightPathRenameSource    uint64 = 1 << 16
	rightPathRenameTarget    uint64 = 1 << 17
	rightPathFilestatGet     uint64 = 1 << 18
	rightPathFilestatSetSize uint64 = 1 << 19
	rightPathFilestatSetTime uint64 = 1 << 20
	rightFdFilestatGet       uint64 = 1 << 21
	rightFdFilestatSetSize   uint64 = 1 << 22
	rightFdFilestatSetTimes  uint64 = 1 << 23
	rightPathSymlink         uint64 = 1 << 24
	rightPathRemoveDirectory uint64 = 1 << 25
	rightPathUnlinkFile      uint64 = 1 << 26

	// allRights is every right: what a descriptor cairn has no record of
	// may pass on (wazero's fd_fdstat_get says which of them it has).
	allRights = ^uint64(0)
	// writing are the rights that change a file's bytes, which a file not
	// opened for writing does not have; reading, those that read them.
	writing = rightFdWrite | rightFdAllocate | rightFdFilestatSetSize
	reading = rightFdRead
	// changing are the rights that change a directory or what is in it
	// (but sync, which changes nothing), which a read-only mount has none
	// of, nor passes on.
	changing = writing | rightPathCreateDirectory | rightPathCreateFile | rightPathLinkSource |
		rightPathLinkTarget | rightPathRenameSource | rightPathRenameTarget | rightPathFilestatSetSize |
		rightPathFilestatSetTime | rightFdFilestatSetTimes | rightPathSymlink | rightPathRemoveDirectory |
		rightPathUnlinkFile
)

// WASI preview 1's fdflags, oflags and errno notcapable.
const (
	fdflagAppend uint16 = 1 << 0
	fdflagDsync  uint16 = 1 << 1
	fdflagRsync  uint16 = 1 << 3
	fdflagSync   uint16 = 1 << 4
	syncFlags           = fdflagDsync | fdflagRsync | fdflagSync

	oflagCreat uint16 = 1 << 0
	oflagTrunc uint16 = 1 << 3

	errnoNotcapable = 76
)

// descRights is what cairn records of a descriptor: its rights, and the
// SYNC fdflags it was opened with (wazero opens the file with them, and
// its fd_fdstat_get does not report them). A read-only preopen's rights,
// and those of a directory opened through one, are only reported (fd_fdstat_get, and so fd_fdstat_set_rights): what it
// is asked to change its mount refuses (EROFS), as a read-only mount
// does, rather than ENOTCAPABLE, and path_open opens through it as
// through a preopen without a record.
type descRights struct {
	base, inheriting uint64
	flags            uint16
	reported         bool            // only reported: a read-only preopen's, or a directory's opened through one
	dir              *guestfs.Anchor // a directory's, which paths relative to it follow (see anchoring)
}

// readOnlyPreopen is what cairn records of a read-only mount's preopen.
var readOnlyPreopen = descRights{base: allRights &^ changing, inheriting: allRights &^ changing, reported: true}

// descriptors holds, for each instance of a runtime, what cairn records
// of its descriptors: those path_open opened, those whose rights
// fd_fdstat_set_rights narrowed, and the preopens of read-only mounts. A
// descriptor with no record (stdio, a read-write preopen, until narrowed)
// has the rights wazero's fd_fdstat_get reports.
// A record follows its descriptor through fd_renumber and goes with
// fd_close, and an instance's records come and go with it (add, forget).
//
// Each instance's records are a plain map: a WASI preview 1 guest has one
// thread, which is in the host function that reads or changes them.
type descriptors struct {
	instances sync.Map // api.Module → map[uint32]descRights
	moves     moved    // the stdio each instance moved
}

// lookup returns fd's record in mod, if any.
func (d *descriptors) lookup(mod api.Module, fd uint32) (descRights, bool) {
	t, ok := d.instances.Load(mod)
	if !ok {
		return descRights{}, false
	}
	r, ok := t.(map[uint32]descRights)[fd]
	return r, ok
}

// add makes the table of mod's records, as it is instantiated: a spare's
// is made with it, before the call that uses it.
func (d *descriptors) add(mod api.Module) { d.instances.Store(mod, map[uint32]descRights{}) }

// set records r for fd in mod. An instance without a table is closed
// (its host call returned after it was): nothing is recorded, so nothing
// keeps it.
func (d *descriptors) set(mod api.Module, fd uint32, r descRights) {
	if t, ok := d.instances.Load(mod); ok {
		t.(map[uint32]descRights)[fd] = r
	}
}

// drop removes fd's record in mod.
func (d *descriptors) drop(mod api.Module, fd uint32) {
	if t, ok := d.instances.Load(mod); ok {
		delete(t.(map[uint32]descRights), fd)
	}
}

// move gives to fd's record (or none, if fd has none) and drops fd's.
func (d *descriptors) move(mod api.Module, fd, to uint32) {
	if r, ok := d.lookup(mod, fd); ok {
		d.set(mod, to, r)
	} else {
		d.drop(mod, to)
	}
	d.drop(mod, fd)
}

// preopens records the preopens of the read-only mounts among ms, the
// mounts of mod's call: wazero gives the mount i the descriptor 3+i. It
// is called before the guest runs.
func (d *descriptors) preopens(mod api.Module, ms []Mount) {
	for i, mt := range ms {
		if mt.ReadOnly {
			d.set(mod, uint32(3+i), readOnlyPreopen)
		}
	}
}

// forget drops every record of mod, which is closed.
func (d *descriptors) forget(mod api.Module) {
	d.instances.Delete(mod)
	d.moves.forget(mod)
}

// has reports whether fd in mod has every right of need. A descriptor
// with no record has them all: wazero's own function decides. FD_SEEK
// implies FD_TELL.
func (d *descriptors) has(mod api.Module, fd uint32, need uint64) bool {
	r, ok := d.lookup(mod, fd)
	if !ok || r.reported {
		return true
	}
	base := r.base
	if base&rightFdSeek != 0 {
		base |= rightFdTell
	}
	return base&need == need
}

// need is the rights a WASI function needs of the descriptor in one of
// its parameters, named as wazero names it; at is its index (see
// instantiateWASI).
type need struct {
	param  string
	rights uint64
	at     int
}

// rightsNeeded are the rights each function of WASI preview 1 that acts
// through a descriptor needs of it, as the specification lists them.
// fd_seek's are fdSeekNeeds, path_open's are opening's.
var rightsNeeded = map[string][]need{
	"fd_advise":               {{param: "fd", rights: rightFdAdvise}},
	"fd_allocate":             {{param: "fd", rights: rightFdAllocate}},
	"fd_datasync":             {{param: "fd", rights: rightFdDatasync}},
	"fd_fdstat_set_flags":     {{param: "fd", rights: rightFdFdstatSetFlags}},
	"fd_filestat_get":         {{param: "fd", rights: rightFdFilestatGet}},
	"fd_filestat_set_size":    {{param: "fd", rights: rightFdFilestatSetSize}},
	"fd_filestat_set_times":   {{param: "fd", rights: rightFdFilestatSetTimes}},
	"fd_pread":                {{param: "fd", rights: rightFdRead | rightFdSeek}},
	"fd_pwrite":               {{param: "fd", rights: rightFdWrite | rightFdSeek}},
	"fd_read":                 {{param: "fd", rights: rightFdRead}},
	"fd_readdir":              {{param: "fd", rights: rightFdReaddir}},
	"fd_sync":                 {{param: "fd", rights: rightFdSync}},
	"fd_tell":                 {{param: "fd", rights: rightFdTell}},
	"fd_write":                {{param: "fd", rights: rightFdWrite}},
	"path_create_directory":   {{param: "fd", rights: rightPathCreateDirectory}},
	"path_filestat_get":       {{param: "fd", rights: rightPathFilestatGet}},
	"path_filestat_set_times": {{param: "fd", rights: rightPathFilestatSetTime}},
	"path_link":               {{param: "old_fd", rights: rightPathLinkSource}, {param: "new_fd", rights: rightPathLinkTarget}},
	"path_readlink":           {{param: "fd", rights: rightPathReadlink}},
	"path_remove_directory":   {{param: "fd", rights: rightPathRemoveDirectory}},
	"path_rename":             {{param: "fd", rights: rightPathRenameSource}, {param: "new_fd", rights: rightPathRenameTarget}},
	"path_symlink":            {{param: "fd", rights: rightPathSymlink}},
	"path_unlink_file":        {{param: "fd", rights: rightPathUnlinkFile}},
}

// needsOf is needs with the index of each parameter in params, the
// names of the function's parameters.
func needsOf(name string, needs []need, params []string) ([]need, error) {
	out := make([]need, len(needs))
	for i, n := range needs {
		n.at = slices.Index(params, n.param)
		if n.at < 0 {
			return nil, fmt.Errorf("wazero's %s has no parameter %s", name, n.param)
		}
		out[i] = n
	}
	return out, nil
}

// checked is a WASI function that first checks the rights its
// descriptors need: a descriptor without them is ENOTCAPABLE, and fn does
// nothing. seek, when set, is what fd_seek needs (it depends on the call).
type checked struct {
	fn    api.GoModuleFunction
	fds   *descriptors
	needs []need
	seek  bool
}

// Call implements api.GoModuleFunction.
func (c checked) Call(ctx context.Context, mod api.Module, stack []uint64) {
	for _, n := range c.needs {
		if !c.fds.has(mod, uint32(stack[n.at]), n.rights) {
			stack[0] = errnoNotcapable
			return
		}
	}
	if c.seek && !c.fds.has(mod, uint32(stack[0]), fdSeekNeeds(int64(stack[1]), uint8(stack[2]))) {
		stack[0] = errnoNotcapable
		return
	}
	c.fn.Call(ctx, mod, stack)
}

// whenceCur is WASI preview 1's whence cur.
const whenceCur = 1

// fdSeekNeeds is what fd_seek(fd, offset, whence) needs: FD_TELL to only
// ask where it is (0 from the current position), FD_SEEK otherwise.
func fdSeekNeeds(offset int64, whence uint8) uint64 {
	if offset == 0 && whence == whenceCur {
		return rightFdTell
	}
	return rightFdSeek
}

// fdstat is fd_fdstat_get reporting what cairn records of a descriptor:
// of the rights wazero's reports for its kind of file (all it could
// have), only those it has, and the SYNC flags it was opened with.
type fdstat struct {
	get api.GoModuleFunction // wazero's fd_fdstat_get
	fds *descriptors
}

// Call implements api.GoModuleFunction.
func (s fdstat) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd, at := uint32(stack[0]), uint32(stack[1])
	s.get.Call(ctx, mod, stack)
	r, ok := s.fds.lookup(mod, fd)
	if stack[0] != 0 || !ok {
		return
	}
	mem := mod.Memory()
	flags, _ := mem.ReadUint16Le(at + 2)
	base, _ := mem.ReadUint64Le(at + 8)
	inheriting, _ := mem.ReadUint64Le(at + 16)
	mem.WriteUint16Le(at+2, flags|r.flags)
	mem.WriteUint64Le(at+8, base&r.base)
	mem.WriteUint64Le(at+16, inheriting&r.inheriting)
}

// rights returns fd's rights as fd_fdstat_get reports them, and the
// SYNC flags recorded of it, or the errno of fd_fdstat_get.
func (s fdstat) rights(ctx context.Context, mod api.Module, fd uint32) (descRights, uint64) {
	var r descRights
	errno := scratch(mod, 24, func(mem api.Memory) uint64 {
		st := []uint64{uint64(fd), 0}
		s.Call(ctx, mod, st)
		r.base, _ = mem.ReadUint64Le(8)
		r.inheriting, _ = mem.ReadUint64Le(16)
		return st[0]
	})
	if rec, ok := s.fds.lookup(mod, fd); ok {
		r.flags = rec.flags
	}
	return r, errno
}

// settingRights is fd_fdstat_set_rights(fd, base, inheriting), which
// wazero does not implement (ENOSYS): it narrows fd's rights to base and
// inheriting, which must be among those it has (ENOTCAPABLE otherwise, and
// nothing changes), so no descriptor ever gains a right.
type settingRights struct{ stat fdstat }

// Call implements api.GoModuleFunction.
func (s settingRights) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd, base, inheriting := uint32(stack[0]), stack[1], stack[2]
	cur, errno := s.stat.rights(ctx, mod, fd)
	switch {
	case errno != 0:
		stack[0] = errno
	case base&^cur.base != 0 || inheriting&^cur.inheriting != 0:
		stack[0] = errnoNotcapable
	default:
		rec, _ := s.stat.fds.lookup(mod, fd)
		s.stat.fds.set(mod, fd, descRights{base: base, inheriting: inheriting, flags: cur.flags, dir: rec.dir})
		stack[0] = 0
	}
}

// opening is path_open(fd, dirflags, path, path_len, oflags, base,
// inheriting, fdflags, result) giving the file it opens the rights it
// really has: those of the directory's inheriting rights that fit how it
// is opened (no writing rights when not for writing, no FD_READ when not
// for reading; wazero opens it for what the asked rights include, and for
// reading and writing to create, truncate or append when they include
// neither). The rights asked for beyond the access mode are not
// subtracted: Go asks the rights of a read-only file for a directory it
// opens (without PATH_FILESTAT_SET_SIZE) and then creates files in it
// that it truncates. A directory's rights are checked: PATH_OPEN, and
// PATH_CREATE_FILE to create, PATH_FILESTAT_SET_SIZE to truncate
// (ENOTCAPABLE without).
type opening struct {
	open, fdstat api.GoModuleFunction // wazero's path_open and fd_fdstat_get
	fds          *descriptors
}

// isDir reports whether fd, open, is a directory, as wazero's
// fd_fdstat_get says.
func (o opening) isDir(ctx context.Context, mod api.Module, fd uint32) bool {
	var filetype byte
	errno := scratch(mod, 24, func(mem api.Memory) uint64 {
		st := []uint64{uint64(fd), 0}
		o.fdstat.Call(ctx, mod, st)
		filetype, _ = mem.ReadByte(0)
		return st[0]
	})
	return errno == 0 && filetype == filetypeDirectory
}

// Call implements api.GoModuleFunction.
func (o opening) Call(ctx context.Context, mod api.Module, stack []uint64) {
	dir, oflags, fdflags, result := uint32(stack[0]), uint16(stack[4]), uint16(stack[7]), uint32(stack[8])
	need := rightPathOpen
	if oflags&oflagCreat != 0 {
		need |= rightPathCreateFile
	}
	if oflags&oflagTrunc != 0 {
		need |= rightPathFilestatSetSize
	}
	inheriting := allRights
	r, ok := o.fds.lookup(mod, dir)
	if ok && !r.reported {
		if r.base&need != need {
			stack[0] = errnoNotcapable
			return
		}
		inheriting = r.inheriting
	}
	// The access mode follows only rights the directory passes on.
	stack[5] &= inheriting
	read, write := accessOf(oflags, fdflags, stack[5])
	dirs := guestfs.DirsOf(ctx)
	if dirs != nil {
		dirs.Opened()
	}
	o.open.Call(ctx, mod, stack)
	var opened *guestfs.Anchor
	if dirs != nil {
		opened = dirs.Opened()
	}
	if stack[0] != 0 {
		return
	}
	fd, _ := mod.Memory().ReadUint32Le(result)
	base := inheriting
	if !read {
		base &^= reading
	}
	if !write {
		base &^= writing
	}
	rec := descRights{base: base, inheriting: inheriting, flags: fdflags & syncFlags, dir: opened}
	if ok && r.reported && o.isDir(ctx, mod, fd) {
		// A directory of a read-only mount: only reported, as the
		// preopen it was opened through (see descRights).
		rec = descRights{base: base & r.inheriting, inheriting: r.inheriting, flags: rec.flags, reported: true, dir: opened}
	}
	o.fds.set(mod, fd, rec)
}

// accessOf is whether wazero's path_open opens a file for reading and
// for writing: for what rights include of FD_READ and FD_WRITE, and when
// they include neither, for both to create, truncate or append, and for
// reading otherwise.
func accessOf(oflags, fdflags uint16, rights uint64) (read, write bool) {
	r, w := rights&rightFdRead != 0, rights&rightFdWrite != 0
	switch {
	case r || w:
		return r, w
	case oflags&(oflagCreat|oflagTrunc) != 0 || fdflags&fdflagAppend != 0:
		return true, true
	}
	return true, false
}

// closing is fd_close dropping what cairn records of the descriptor.
type closing struct {
	close api.GoModuleFunction // wazero's fd_close
	fds   *descriptors
}

// Call implements api.GoModuleFunction.
func (c closing) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd := uint32(stack[0])
	c.close.Call(ctx, mod, stack)
	if stack[0] == 0 {
		c.fds.drop(mod, fd)
	}
}
