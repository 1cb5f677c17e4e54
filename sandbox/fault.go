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
//
// A read or write whose iovecs hold more than maxRW bytes moves maxRW of
// them, a short one (see bounded): wazero's counted what it moved modulo
// 2^32 in a count of 32 bits, so one of 4 GiB and 1 MiB (iovecs may share
// a buffer) was told it moved 1 MiB.
type faulting struct {
	fn, fdstat api.GoModuleFunction // the function, and wazero's fd_fdstat_get
	outs       []out                // its answers' pointers
	iovs       int                  // the index of its iovec list, or -1; its length is the next
	fd         bool                 // its first parameter is a descriptor
	writes     bool                 // it writes from its iovecs (fd_write, fd_pwrite)
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
	f := faulting{fn: fn, fdstat: fdstat, iovs: -1, fd: len(params) > 0 && params[0] == "fd",
		writes: name == "fd_write" || name == "fd_pwrite"}
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
	if mem == nil {
		f.fn.Call(ctx, mod, stack)
		return
	}
	errno, c := f.check(ctx, mem, stack)
	if errno != 0 {
		if bad := f.badFd(ctx, mod, stack[0]); bad != 0 {
			errno = bad
		}
		stack[0] = errno
		return
	}
	if c.n == 0 {
		f.fn.Call(ctx, mod, stack)
		return
	}
	f.bounded(ctx, mod, mem, stack, c)
}

// maxRW is the most one read or write moves, as Linux's read(2), write(2)
// and their vectored and positioned forms move at most MAX_RW_COUNT bytes
// (INT_MAX rounded down to a page) and return a short count: it fits
// WASI's 32-bit count, and a program that writes all it was given loops.
const maxRW = 0x7ffff000

// cut is where a read or write of more than maxRW bytes stops: after n
// iovecs, the last of them cut to last bytes.
type cut struct {
	n, last uint32
}

// bounded makes the read or write of stack, whose iovecs hold more than
// maxRW bytes, move maxRW of them: it passes the first c.n iovecs alone,
// the last cut to c.last bytes in the guest's memory for the call and put
// back after it, but for any of its bytes the call itself wrote there (a
// read into the iovec list, or the count written over it), which are left
// as the call left them, as on Linux, which reads the list before it acts.
func (f faulting) bounded(ctx context.Context, mod api.Module, mem api.Memory, stack []uint64, c cut) {
	iovs := uint32(stack[f.iovs])
	at := iovs + 8*(c.n-1) + 4 // the last iovec's length
	was, _ := mem.ReadUint32Le(at)
	mem.WriteUint32Le(at, c.last)
	stack[f.iovs+1] = uint64(c.n)
	result := uint32(stack[f.outs[0].at])
	f.fn.Call(ctx, mod, stack)
	moved, _ := mem.ReadUint32Le(result)
	var read uint8 // the bytes of the length a read wrote
	if !f.writes && stack[0] == 0 {
		read = readInto(mem, iovs, c.n, moved, at)
	}
	for i := range uint32(4) {
		a := at + i
		written := a-result < 4 || read&(1<<i) != 0
		if !f.writes && stack[0] != 0 {
			// A read that failed does not tell how much it read: a byte
			// that is not what was put there was read into.
			b, _ := mem.ReadByte(a)
			written = written || b != byte(c.last>>(8*i))
		}
		if !written {
			mem.WriteByte(a, byte(was>>(8*i)))
		}
	}
}

// readInto reports which of the 4 bytes at a a read that moved n bytes
// into the first count iovecs at iovs wrote, a bit each.
func readInto(mem api.Memory, iovs, count, n, a uint32) uint8 {
	var read uint8
	for i := uint32(0); i < count && n > 0; i++ {
		p, _ := mem.ReadUint32Le(iovs + 8*i)
		l, _ := mem.ReadUint32Le(iovs + 8*i + 4)
		l = min(l, n)
		for j := range uint32(4) {
			if a+j-p < l {
				read |= 1 << j
			}
		}
		n -= l
	}
	return read
}

// check answers EFAULT if a pointer of the call is not inside mem, and
// EINTR if the call must stop while it reads the iovecs, of which a
// guest may pass hundreds of millions; and for iovecs that hold more
// than maxRW bytes, where to cut them (n 0 when they hold less).
func (f faulting) check(ctx context.Context, mem api.Memory, stack []uint64) (uint64, cut) {
	size := uint64(mem.Size())
	inside := func(at, n uint64) bool { return at+n <= size }
	for _, o := range f.outs {
		n := uint64(o.size)
		if o.sizeAt >= 0 {
			n = uint64(uint32(stack[o.sizeAt]))
		}
		if !inside(uint64(uint32(stack[o.at])), n) {
			return errnoFault, cut{}
		}
	}
	if f.iovs < 0 {
		return 0, cut{}
	}
	iovs, n := uint64(uint32(stack[f.iovs])), uint64(uint32(stack[f.iovs+1]))
	if !inside(iovs, 8*n) {
		return errnoFault, cut{}
	}
	b, _ := mem.Read(uint32(iovs), uint32(8*n))
	var total uint64
	var c cut
	for i := uint64(0); i < n; i++ {
		if i%(1<<16) == 0 && ctx.Err() != nil {
			return errnoIntr, cut{}
		}
		at, l := uint64(le32(b[8*i:])), uint64(le32(b[8*i+4:]))
		if l > 0 && !inside(at, l) {
			return errnoFault, cut{}
		}
		if c.n == 0 && total+l > maxRW {
			c = cut{n: uint32(i + 1), last: uint32(maxRW - total)}
		}
		total += l
	}
	return 0, c
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
