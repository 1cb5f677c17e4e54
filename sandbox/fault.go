package sandbox

import (
	"context"
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero/api"
)

// faulting is a WASI function that acts (reads, writes, seeks, opens,
// lists) and then writes its answer to the guest's memory, or writes two
// answers one after the other (args_sizes_get, environ_sizes_get), which
// first checks that every pointer it is given is inside that memory: the
// answers', and for fd_read, fd_pread, fd_write and fd_pwrite the iovec
// list and each iovec's buffer. One that is not is EFAULT, and nothing
// is done: no byte read, written or moved past, no file opened, made or
// emptied, no memory of the guest's written. wazero's did the call's
// work and then answered EFAULT: a file written whose write the guest
// was told failed, a file made or emptied by a path_open that failed,
// the first iovecs of an fd_read filled, a link's text written to a
// path_readlink's buffer, argc written and argv_len not. An iovec list
// whose length in bytes (8 an iovec) passes 2^32, which wazero's counted
// modulo 2^32 (one iovec for 2^29 + 1 of them), is past the memory too.
//
// A descriptor that is not open is EBADF first, as Linux checks the
// descriptor before the buffer: so too for fd_filestat_get, which does
// nothing but write its answer, and whose pointer wazero's checked first.
type faulting struct {
	fn, fdstat api.GoModuleFunction // the function, and wazero's fd_fdstat_get
	outs       []out                // its answers' pointers
	iovs       int                  // the index of its iovec list, or -1; its length is the next
	fd         bool                 // its first parameter is a descriptor
}

// out is an answer's pointer, at param, and its size in bytes: size, or
// when sizeAt is not -1, the parameter at sizeAt.
type out struct {
	at, size, sizeAt int
}

// faultParams are, for each function faulting checks, the parameters
// pointing at its answers and their sizes (a number of bytes or the
// parameter holding it), and its iovec list's.
var faultParams = map[string][][2]any{
	"fd_read":       {{"iovs", "iovs_len"}, {"result.nread", 4}},
	"fd_pread":      {{"iovs", "iovs_len"}, {"result.nread", 4}},
	"fd_write":      {{"iovs", "iovs_len"}, {"result.nwritten", 4}},
	"fd_pwrite":     {{"iovs", "iovs_len"}, {"result.nwritten", 4}},
	"fd_seek":       {{"result.newoffset", 8}},
	"fd_tell":       {{"result.offset", 8}},
	"fd_readdir":    {{"buf", "buf_len"}, {"result.bufused", 4}},
	"path_readlink": {{"buf", "buf_len"}, {"result.bufused", 4}},
	"path_open":     {{"result.opened_fd", 4}},
	// No act, but wazero's checked the answer's pointer before the
	// descriptor, where Linux checks the descriptor first.
	"fd_filestat_get": {{"result.filestat", 64}},
	// Two answers, each written on its own: wazero's wrote the first and
	// then answered EFAULT for the second.
	"args_sizes_get":    {{"result.argc", 4}, {"result.argv_len", 4}},
	"environ_sizes_get": {{"result.environc", 4}, {"result.environv_len", 4}},
}

// newFaulting is faulting of fn, the function name, with params.
func newFaulting(name string, fn, fdstat api.GoModuleFunction, params []string) (faulting, error) {
	f := faulting{fn: fn, fdstat: fdstat, iovs: -1, fd: len(params) > 0 && params[0] == "fd"}
	for _, p := range faultParams[name] {
		at := slices.Index(params, p[0].(string))
		if at < 0 {
			return faulting{}, fmt.Errorf("wazero's %s has no parameter %s", name, p[0])
		}
		switch size := p[1].(type) {
		case int:
			f.outs = append(f.outs, out{at: at, size: size, sizeAt: -1})
		case string:
			sizeAt := slices.Index(params, size)
			if sizeAt < 0 {
				return faulting{}, fmt.Errorf("wazero's %s has no parameter %s", name, size)
			}
			if p[0] == "iovs" {
				f.iovs = at
			} else {
				f.outs = append(f.outs, out{at: at, sizeAt: sizeAt})
			}
		}
	}
	return f, nil
}

// Call implements api.GoModuleFunction.
func (f faulting) Call(ctx context.Context, mod api.Module, stack []uint64) {
	mem := mod.Memory()
	if mem != nil {
		if errno := f.check(ctx, mem, stack); errno != 0 {
			if bad := f.badFd(ctx, mod, stack[0]); bad != 0 {
				errno = bad
			}
			stack[0] = errno
			return
		}
	}
	f.fn.Call(ctx, mod, stack)
}

// check answers EFAULT if a pointer of the call is not inside mem, and
// EINTR if the call must stop while it reads the iovecs, of which a
// guest may pass hundreds of millions.
func (f faulting) check(ctx context.Context, mem api.Memory, stack []uint64) uint64 {
	size := uint64(mem.Size())
	inside := func(at, n uint64) bool { return at+n <= size }
	for _, o := range f.outs {
		n := uint64(o.size)
		if o.sizeAt >= 0 {
			n = uint64(uint32(stack[o.sizeAt]))
		}
		if !inside(uint64(uint32(stack[o.at])), n) {
			return errnoFault
		}
	}
	if f.iovs < 0 {
		return 0
	}
	iovs, n := uint64(uint32(stack[f.iovs])), uint64(uint32(stack[f.iovs+1]))
	if !inside(iovs, 8*n) {
		return errnoFault
	}
	b, _ := mem.Read(uint32(iovs), uint32(8*n))
	for i := uint64(0); i < n; i++ {
		if i%(1<<16) == 0 && ctx.Err() != nil {
			return errnoIntr
		}
		at, l := uint64(le32(b[8*i:])), uint64(le32(b[8*i+4:]))
		if l > 0 && !inside(at, l) {
			return errnoFault
		}
	}
	return 0
}

// badFd is wazero's errno of fd_fdstat_get of fd, the function's first
// parameter: EBADF for one not open; 0 for a function taking none.
func (f faulting) badFd(ctx context.Context, mod api.Module, fd uint64) uint64 {
	if !f.fd {
		return 0
	}
	return scratch(mod, 24, func(api.Memory) uint64 {
		st := []uint64{fd, 0}
		f.fdstat.Call(ctx, mod, st)
		return st[0]
	})
}

// le32 is the little-endian uint32 at the start of b.
func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
