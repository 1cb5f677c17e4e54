package sandbox

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/tetratelabs/wazero/api"
)

// WASI preview 1's event types.
const (
	eventClock   = 0
	eventFdRead  = 1
	eventFdWrite = 2
)

// polling is poll_oneoff(in, out, nsubscriptions, nevents) answering the
// subscriptions to descriptors at once: a file never blocks, stdout and
// stderr are written to memory or a pipe the host drains, and wazero
// takes stdin as always ready (a read of it that has to wait waits at
// most until the call's deadline, see stdinFor). A subscription to read or write an
// open descriptor gets an event without error (ENOTCAPABLE without
// FD_READ or FD_WRITE), one to a descriptor not open EBADF, and the
// clocks subscribed beside them none: the call does not wait. wazero's
// answered a subscription to write with ENOTSUP and reported every clock
// as come, after waiting for the shortest. A call with only clocks, or
// one wazero refuses (see answers), is wazero's.
//
// Answering costs the host a little for each subscription, and a guest
// may pass millions of them, where no stop check runs: once the call must
// stop (its deadline, or its context cancelled), polling stops too, with
// EINTR, and the guest's next stop check ends the call.
type polling struct {
	poll, advise api.GoModuleFunction // wazero's poll_oneoff and fd_advise
	fds          *descriptors
}

// Call implements api.GoModuleFunction.
func (p polling) Call(ctx context.Context, mod api.Module, stack []uint64) {
	in, out, n, nevents := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	mem := mod.Memory()
	if n == 0 || uint64(n)*48 > math.MaxUint32 {
		p.poll.Call(ctx, mod, stack)
		return
	}
	subs, ok := mem.Read(in, n*48)
	if !ok || !p.answers(subs) {
		p.poll.Call(ctx, mod, stack)
		return
	}
	subs = append([]byte(nil), subs...)
	events, ok := mem.Read(out, n*32)
	if !ok {
		p.poll.Call(ctx, mod, stack)
		return
	}
	clear(events)
	count := uint32(0)
	for i := range n {
		if i%stopEvery == stopEvery-1 && ctx.Err() != nil {
			stack[0] = errnoIntr
			return
		}
		s := subs[i*48:]
		typ := s[8]
		if typ == eventClock {
			continue
		}
		fd := binary.LittleEndian.Uint32(s[16:])
		if int32(fd) < 0 {
			stack[0] = errnoBadf
			return
		}
		var errno uint16
		need := rightFdRead
		if typ == eventFdWrite {
			need = rightFdWrite
		}
		switch {
		case !isOpen(ctx, mod, p.advise, fd):
			errno = errnoBadf
		case !p.fds.has(mod, fd, need):
			errno = errnoNotcapable
		}
		e := events[count*32:]
		copy(e, s[:8]) // userdata
		binary.LittleEndian.PutUint16(e[8:], errno)
		e[10] = typ
		count++
	}
	if !mem.WriteUint32Le(nevents, count) {
		stack[0] = errnoFault
		return
	}
	stack[0] = 0
}

// answers reports whether polling answers subs itself: they subscribe to
// at least one descriptor, and to nothing wazero refuses (an unknown type
// is EINVAL, a clock with flags ENOTSUP or EINVAL).
func (polling) answers(subs []byte) bool {
	descriptors := false
	for i := 0; i < len(subs); i += 48 {
		switch subs[i+8] {
		case eventFdRead, eventFdWrite:
			descriptors = true
		case eventClock:
			if binary.LittleEndian.Uint16(subs[i+40:]) != 0 {
				return false
			}
		default:
			return false
		}
	}
	return descriptors
}

// WASI preview 1's errnos fault and intr.
const (
	errnoFault = 21
	errnoIntr  = 27
)

// stopEvery is how many subscriptions polling answers between two looks
// at whether the call must stop.
const stopEvery = 1024

// isOpen reports whether fd is an open descriptor of mod. wazero's
// fd_advise (advise) advises nothing: it looks fd up, EBADF if none is
// open there, and checks the advice.
func isOpen(ctx context.Context, mod api.Module, advise api.GoModuleFunction, fd uint32) bool {
	stack := []uint64{uint64(fd), 0, 0, 0} // offset 0, length 0, advice normal
	advise.Call(ctx, mod, stack)
	return stack[0] == 0
}
