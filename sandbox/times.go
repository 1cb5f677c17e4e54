package sandbox

import (
	"context"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/tetratelabs/wazero/api"
)

// lookupSymlinkFollow is WASI preview 1's lookupflag symlink_follow.
const lookupSymlinkFollow = 1

// notFollowing is path_filestat_set_times(fd, flags, path, path_len, atim,
// mtim, fst_flags) without LOOKUP_SYMLINK_FOLLOW setting the times of
// what the path names, as utimensat(2) with AT_SYMLINK_NOFOLLOW does: a
// file or a directory has its times set as with the flag, and a symlink
// has its own set, by its filesystem told not to follow it
// (guestfs.WithoutFollowing), which sets them by its name in the directory
// holding it, whatever it leads to. wazero's opened the path for writing,
// following a symlink: a directory was EISDIR, a file the guest may not
// write EACCES, and a symlink to a file had its target's times set.
type notFollowing struct {
	set, stat api.GoModuleFunction // wazero's path_filestat_set_times and path_filestat_get
}

// Call implements api.GoModuleFunction.
func (n notFollowing) Call(ctx context.Context, mod api.Module, stack []uint64) {
	mem := mod.Memory()
	path, ok := mem.Read(uint32(stack[2]), uint32(stack[3]))
	if uint32(stack[1])&lookupSymlinkFollow != 0 || !ok {
		n.set.Call(ctx, mod, stack)
		return
	}
	p := string(path)
	var filetype byte
	errno := scratch(mod, uint32(64+len(p)), func(mem api.Memory) uint64 {
		mem.WriteString(64, p)
		st := []uint64{stack[0], 0, 64, uint64(len(p)), 0}
		n.stat.Call(ctx, mod, st)
		filetype, _ = mem.ReadByte(16)
		return st[0]
	})
	switch {
	case errno != 0:
		stack[0] = errno
	case filetype == filetypeSymlink:
		stack[1] |= lookupSymlinkFollow
		if !guestfs.WithoutFollowing(ctx, func() { n.set.Call(ctx, mod, stack) }) {
			stack[0] = errnoPerm // no call's filesystems to tell
		}
	default:
		stack[1] |= lookupSymlinkFollow
		n.set.Call(ctx, mod, stack)
	}
}

// lookingUp is a WASI function taking lookupflags (path_filestat_get,
// path_filestat_set_times, path_link: the parameter at flags) that
// refuses a flag WASI preview 1 does not define (EINVAL) before doing
// anything, as fstatat(2), utimensat(2) and linkat(2) refuse flags they
// do not know; wazero's ignored such bits.
type lookingUp struct {
	fn    api.GoModuleFunction
	flags int
}

// Call implements api.GoModuleFunction.
func (l lookingUp) Call(ctx context.Context, mod api.Module, stack []uint64) {
	if uint32(stack[l.flags])&^lookupSymlinkFollow != 0 {
		stack[0] = errnoInval
		return
	}
	l.fn.Call(ctx, mod, stack)
}
