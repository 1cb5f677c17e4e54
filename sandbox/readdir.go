package sandbox

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// errnoNoent is WASI preview 1's errno noent.
const errnoNoent = 44

// walkBuf is the size of the buffer, in the guest's memory, that
// readdirring lists a directory on into: 170 or so entries a listing.
const walkBuf = 4096

// readdirring is fd_readdir (wazero's, readdir) answering every cookie, as
// wasmtime and Linux do. A cookie is the index of an entry in the
// directory's listing from its start ("." and ".." first), as wazero
// gives them in d_next. wazero keeps the entries of a descriptor's last
// listing and answers a cookie among them, or 0, which lists the
// directory again; a cookie past them (on a descriptor that listed
// nothing, or past the directory's end) or before them it answers
// ENOENT. readdirring then lists the directory from its start, in a
// buffer of its own, on to the cookie (wazero keeping each listing, the
// next starts where it ended) and answers the cookie there; a cookie
// past the directory's end lists nothing (bufused 0), as getdents(2)
// after lseek(2) past the end does.
//
// # Errors
//
// EINTR once the call must stop, while it lists on; an errno of wazero's
// listing; and EFAULT for a bufused past the end of memory.
type readdirring struct {
	readdir api.GoModuleFunction
}

// Call implements api.GoModuleFunction.
func (r readdirring) Call(ctx context.Context, mod api.Module, stack []uint64) {
	params := [5]uint64(stack[:5])
	r.readdir.Call(ctx, mod, stack)
	if stack[0] != errnoNoent {
		return
	}
	fd, cookie, bufused := params[0], params[3], uint32(params[4])
	var end bool
	errno := scratch(mod, walkBuf+4, func(mem api.Memory) uint64 {
		var errno uint64
		end, errno = r.listTo(ctx, mod, mem, fd, cookie)
		return errno
	})
	switch {
	case errno != 0:
		stack[0] = errno
	case end:
		stack[0] = 0
		if !mod.Memory().WriteUint32Le(bufused, 0) {
			stack[0] = errnoFault
		}
	default:
		copy(stack, params[:])
		r.readdir.Call(ctx, mod, stack)
	}
}

// listTo lists fd from its start on, into mem's first walkBuf bytes,
// until wazero keeps the entry at cookie or the one after the last, and
// reports whether cookie is past the end of the directory.
func (r readdirring) listTo(ctx context.Context, mod api.Module, mem api.Memory, fd, cookie uint64) (bool, uint64) {
	for at := uint64(0); ; {
		st := []uint64{fd, 0, walkBuf, at, walkBuf}
		if r.readdir.Call(ctx, mod, st); st[0] != 0 {
			return false, st[0]
		}
		used, _ := mem.ReadUint32Le(walkBuf)
		n := dirents(mem, used)
		switch {
		case n == 0:
			return true, 0 // at is the end, and cookie past it
		case cookie <= at+n:
			return false, 0
		case ctx.Err() != nil:
			return false, errnoIntr
		}
		at += n
	}
}

// dirents is how many entries fd_readdir wrote, their header at least, in
// the first used bytes of mem.
func dirents(mem api.Memory, used uint32) uint64 {
	var n uint64
	for at := uint32(0); at+24 <= used; n++ {
		namlen, _ := mem.ReadUint32Le(at + 16)
		at += 24 + namlen
	}
	return n
}
