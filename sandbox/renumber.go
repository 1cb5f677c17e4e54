package sandbox

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// errnoBadf is WASI preview 1's errno badf.
const errnoBadf = 8

// renumbering is fd_renumber(fd, to) as wasmtime has it and the WASI
// spec means it: fd's file replaces the one open at to, and a to where
// no file is open is EBADF. wazero's own puts fd's file at index to of
// the instance's descriptor table whether or not a file is open there,
// growing the table to that index: 8 bytes of host memory for every
// number up to it, outside the guest's memory limit (16 GiB for
// 0x7fffffff), and a descriptor past any the call's budget of open
// files allows. With to open, every descriptor stays below the number
// of files open at once, since wazero gives a new file the lowest free
// number. fd_renumber(fd, fd) of an open fd changes nothing (wazero's
// would close the file and keep it at fd). A file may replace a preopen
// (wazero's refuses, ENOTSUP): the preopen is closed first, as any other
// file at to is, and the file that takes its number is no preopen. A
// preopen is still not moved (ENOTSUP): wazero keeps them apart from
// other files and offers no way to move one. Nor does this move stdio:
// renumberingMoved, over it, does.
type renumbering struct {
	// wazero's fd_renumber, fd_advise, fd_close and fd_prestat_get
	renumber, advise, close, prestat api.GoModuleFunction
	fds                              *descriptors // the record of fd moves to to
}

// Call implements api.GoModuleFunction.
func (r renumbering) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd, to := uint32(stack[0]), uint32(stack[1])
	switch {
	case !r.open(ctx, mod, to):
		stack[0] = errnoBadf
	case fd == to:
		stack[0] = 0
	case r.open(ctx, mod, fd) && !r.preopen(ctx, mod, fd) && r.preopen(ctx, mod, to):
		if errno := r.closeFD(ctx, mod, to); errno != 0 {
			stack[0] = errno
			return
		}
		r.renumbered(ctx, mod, stack)
	default:
		r.renumbered(ctx, mod, stack)
	}
}

// renumbered calls wazero's fd_renumber and, when it moved the file, moves
// what cairn records of it (see descriptors).
func (r renumbering) renumbered(ctx context.Context, mod api.Module, stack []uint64) {
	fd, to := uint32(stack[0]), uint32(stack[1])
	r.renumber.Call(ctx, mod, stack)
	if stack[0] == 0 {
		r.fds.move(mod, fd, to)
	}
}

// preopen reports whether fd is a preopen or stdio, the files wazero
// keeps apart: its fd_prestat_get answers those (stdio with an empty
// name) and is EBADF for any other.
func (r renumbering) preopen(ctx context.Context, mod api.Module, fd uint32) bool {
	return scratch(mod, 8, func(api.Memory) uint64 {
		stack := []uint64{uint64(fd), 0}
		r.prestat.Call(ctx, mod, stack)
		return stack[0]
	}) == 0
}

// closeFD closes fd with wazero's fd_close and returns its errno.
func (r renumbering) closeFD(ctx context.Context, mod api.Module, fd uint32) uint64 {
	stack := []uint64{uint64(fd)}
	r.close.Call(ctx, mod, stack)
	return stack[0]
}

// open reports whether fd is an open descriptor of mod.
func (r renumbering) open(ctx context.Context, mod api.Module, fd uint32) bool {
	return isOpen(ctx, mod, r.advise, fd)
}
