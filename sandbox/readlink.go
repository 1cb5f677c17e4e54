package sandbox

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// readlinking is path_readlink(fd, path, path_len, buf, buf_len,
// bufused) that fills a buffer too small for the link's text with as much
// of it as fits, as readlink(2) does, where wazero's is ERANGE and writes
// nothing. It asks wazero's again with room for any link (maxLink bytes,
// in borrowed memory, see scratch) and copies out what fits.
type readlinking struct {
	readlink api.GoModuleFunction // wazero's path_readlink
}

// errnoRange is WASI preview 1's errno range; maxLink is the longest link
// text Linux makes (PATH_MAX less its NUL).
const (
	errnoRange = 68
	maxLink    = 4095
)

// Call implements api.GoModuleFunction.
func (r readlinking) Call(ctx context.Context, mod api.Module, stack []uint64) {
	params := [6]uint64(stack[:6])
	buf, bufLen, used := uint32(stack[3]), uint32(stack[4]), uint32(stack[5])
	r.readlink.Call(ctx, mod, stack)
	if stack[0] != errnoRange {
		return
	}
	var text []byte
	errno := scratch(mod, maxLink+4, func(mem api.Memory) uint64 {
		st := []uint64{params[0], params[1], params[2], 4, maxLink, 0}
		r.readlink.Call(ctx, mod, st)
		n, _ := mem.ReadUint32Le(0)
		b, _ := mem.Read(4, min(n, bufLen))
		text = append(text, b...)
		return st[0]
	})
	mem := mod.Memory()
	switch {
	case errno != 0:
		stack[0] = errno
	case !mem.Write(buf, text) || !mem.WriteUint32Le(used, uint32(len(text))):
		stack[0] = errnoFault
	default:
		stack[0] = 0
	}
}
