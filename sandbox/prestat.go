package sandbox

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// errnoNametoolong is WASI preview 1's errno nametoolong.
const errnoNametoolong = 37

// prestatName is fd_prestat_dir_name(fd, path, path_len) as the WASI
// spec means it and wasmtime has it: path_len is the size of the guest's
// buffer, which must hold the preopen's name (the length fd_prestat_get
// gives); a larger buffer gets the name, and a smaller one NAMETOOLONG.
// wazero's has it the other way round: it fills a buffer that is too
// small with the start of the name and succeeds, and refuses a larger
// one, so a guest that allocates room for a terminating NUL fails.
type prestatName struct {
	get, name api.GoModuleFunction // wazero's fd_prestat_get and fd_prestat_dir_name
}

// Call implements api.GoModuleFunction.
func (p prestatName) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd, path, size := stack[0], stack[1], uint32(stack[2])
	n, errno := p.nameLen(ctx, mod, fd)
	switch {
	case errno != 0:
		stack[0] = errno
	case size < n:
		stack[0] = errnoNametoolong
	default:
		stack[0], stack[1], stack[2] = fd, path, uint64(n)
		p.name.Call(ctx, mod, stack)
	}
}

// nameLen is the length of the name of preopen fd, from wazero's
// fd_prestat_get, or its errno (EBADF where fd is not a preopen).
func (p prestatName) nameLen(ctx context.Context, mod api.Module, fd uint64) (uint32, uint64) {
	var prestat uint64
	errno := scratch(mod, 8, func(mem api.Memory) uint64 {
		stack := []uint64{fd, 0}
		p.get.Call(ctx, mod, stack)
		prestat, _ = mem.ReadUint64Le(0)
		return stack[0]
	})
	return uint32(prestat >> 32), errno
}

// scratch calls f, which may have a wazero function write its answer to
// the first n bytes of the guest's memory, and puts those bytes back as
// they were. A WASI preview 1 guest has one thread, which is in the call
// that asked, so nothing of it sees them change. A memory smaller than n
// is EBADF: no descriptor's answer fits it.
func scratch(mod api.Module, n uint32, f func(api.Memory) uint64) uint64 {
	mem := mod.Memory()
	if mem == nil {
		return errnoBadf
	}
	b, ok := mem.Read(0, n)
	if !ok {
		return errnoBadf
	}
	saved := append([]byte(nil), b...)
	defer mem.Write(0, saved)
	return f(mem)
}

// errnoIsdir is WASI preview 1's errno isdir; filetypeDirectory is its
// filetype of a directory.
const (
	errnoIsdir        = 31
	filetypeDirectory = 3
)

// advising is fd_advise that refuses a length past int64's (EINVAL), a
// negative one to the host, as posix_fadvise(2) does; wazero's, which
// advises nothing, took it.
type advising struct{ advise api.GoModuleFunction }

// Call implements api.GoModuleFunction.
func (a advising) Call(ctx context.Context, mod api.Module, stack []uint64) {
	negative := int64(stack[2]) < 0
	a.advise.Call(ctx, mod, stack)
	if stack[0] == 0 && negative {
		stack[0] = errnoInval
	}
}

// timing is fd_filestat_set_times or path_filestat_set_times that
// refuses fst_flags (the parameter at flags) with a bit WASI preview 1
// does not define (EINVAL) before doing anything, as utimensat(2) refuses
// a time that is not one and flags it does not know, before it looks at
// the descriptor; wazero's ignored such bits and set the times.
type timing struct {
	set   api.GoModuleFunction
	flags int
}

// fstflagsKnown are WASI preview 1's fstflags: ATIM, ATIM_NOW, MTIM,
// MTIM_NOW.
const fstflagsKnown = 0xf

// Call implements api.GoModuleFunction.
func (t timing) Call(ctx context.Context, mod api.Module, stack []uint64) {
	if uint32(stack[t.flags])&^fstflagsKnown != 0 {
		stack[0] = errnoInval
		return
	}
	t.set.Call(ctx, mod, stack)
}

// allocating is fd_allocate that refuses an empty range (EINVAL) and a
// directory (EBADF), as fallocate(2) does, of a directory as of any
// descriptor not open for writing, which a directory's never is. wazero's
// compares the size fd_filestat_get gives with the range and, a
// directory's size being at least the range, succeeds on one.
type allocating struct {
	allocate, fdstat api.GoModuleFunction // wazero's fd_allocate and fd_fdstat_get
}

// Call implements api.GoModuleFunction.
func (a allocating) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd := stack[0]
	var filetype byte
	errno := scratch(mod, 24, func(mem api.Memory) uint64 {
		st := []uint64{fd, 0}
		a.fdstat.Call(ctx, mod, st)
		filetype, _ = mem.ReadByte(0)
		return st[0]
	})
	switch {
	case errno != 0:
		stack[0] = errno
	case stack[2] == 0:
		// posix_fallocate(3) and fallocate(2) refuse an empty range
		// before what the file is; wazero's allocated it.
		stack[0] = errnoInval
	case filetype == filetypeDirectory:
		stack[0] = errnoBadf
	default:
		a.allocate.Call(ctx, mod, stack)
	}
}
