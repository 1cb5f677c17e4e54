package sandbox

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// errnoNosys and errnoSpipe are WASI preview 1's errnos nosys and spipe;
// filetypeRegularFile is its filetype of a regular file.
const (
	errnoNosys          = 52
	errnoSpipe          = 70
	filetypeRegularFile = 4
)

// unseekable is fd_seek, fd_tell, fd_pread or fd_pwrite (fn, wazero's),
// whose descriptor is the first parameter, answering ESPIPE for a
// descriptor that is neither a file nor a directory: stdin, stdout or
// stderr, as lseek(2), pread(2) and pwrite(2) answer for a pipe. wazero's
// stdio cannot seek, and wazero says so as ENOSYS (fd_seek, fd_tell) or
// EBADF (fd_pread, fd_pwrite), as if the host had no such function or
// the descriptor were not open.
type unseekable struct {
	fn     api.GoModuleFunction
	fdstat api.GoModuleFunction // wazero's fd_fdstat_get
}

// Call implements api.GoModuleFunction.
func (u unseekable) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd := stack[0]
	u.fn.Call(ctx, mod, stack)
	if stack[0] != errnoNosys && stack[0] != errnoBadf {
		return
	}
	var filetype byte
	errno := scratch(mod, 24, func(mem api.Memory) uint64 {
		st := []uint64{fd, 0}
		u.fdstat.Call(ctx, mod, st)
		filetype, _ = mem.ReadByte(0)
		return st[0]
	})
	if errno == 0 && filetype != filetypeRegularFile && filetype != filetypeDirectory {
		stack[0] = errnoSpipe
	}
}
