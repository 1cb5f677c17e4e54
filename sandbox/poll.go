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
// as come, after waiting for the shortest. A call with only clocks gets
// what wazero gives it: every clock as come, after wazero waited for the
// shortest (asked of wazero alone).
//
// Answering costs the host a little for each subscription, and a guest
// may pass tens of millions of them, where no stop check runs: once the
// call must stop (its deadline, or its context cancelled), polling stops
// too, with EINTR, and the guest's next stop check ends the call. So the
// subscriptions are checked here, as wazero checks them (the first one it
// refuses gives the call's errno), and wazero is left only what costs
// the same for any count: one that overflows, memory out of range, the
// wait for one clock.
//
// A clock with the flag abstime waits until its clock reads its time, as
// Linux's clock_nanosleep(2) with TIMER_ABSTIME does (wasi-libc's, with
// it, subscribes so), and a time past is come at once; wazero's refused
// it (ENOTSUP). It is waited for as the time from the clock's reading
// (clock_time_get) to it. A clock of an id no clock has is EINVAL, with
// abstime or without, as clock_nanosleep(2) says of a clock Linux has
// not; wazero's took a relative one and waited its timeout. So are the
// CPU clocks (2 and 3), which clock_time_get reads (cpuClocks) but a
// guest does not wait on: a guest is one thread, whose CPU time does not
// pass while it waits, and clock_nanosleep(2) of the thread's CPU clock
// is EINVAL.
type polling struct {
	poll, advise, clock api.GoModuleFunction // wazero's poll_oneoff, fd_advise and clock_time_get
	fds                 *descriptors
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
	if !ok {
		p.poll.Call(ctx, mod, stack)
		return
	}
	// Events past memory are EFAULT before any subscription is checked,
	// as wazero checks them.
	events, ok := mem.Read(out, n*32)
	if !ok {
		stack[0] = errnoFault
		return
	}
	now := func(id uint32) (int64, bool) { return p.now(ctx, mod, id) }
	descriptors, shortest, errno := checkSubscriptions(ctx, subs, now)
	if errno != 0 {
		stack[0] = errno
		return
	}
	if !descriptors && shortest >= 0 {
		if errno := p.wait(ctx, mod, subs[shortest*48:shortest*48+48], now); errno != 0 {
			stack[0] = errno
			return
		}
	}
	a := answering{p: p, ctx: ctx, mod: mod, descriptors: descriptors, events: events}
	split, before, ok := splitAt(ctx, subs, descriptors, int64(out)-int64(in))
	if !ok {
		stack[0] = errnoIntr
		return
	}
	// Those from split on are answered first, in order, then those before
	// it, backwards: so each subscription is read before any event
	// overwrites it, but the one before split, which is kept aside (see
	// splitAt).
	var kept [48]byte
	if split > 0 {
		copy(kept[:], subs[(split-1)*48:])
	}
	count := before
	for i := split; i < n; i++ {
		if !a.answer(subs[i*48:i*48+48], &count, false) {
			stack[0] = errnoIntr
			return
		}
	}
	total, count := count, before
	for i := split; i > 0; i-- {
		s := subs[(i-1)*48 : i*48]
		if i == split {
			s = kept[:]
		}
		if !a.answer(s, &count, true) {
			stack[0] = errnoIntr
			return
		}
	}
	if !mem.WriteUint32Le(nevents, total) {
		stack[0] = errnoFault
		return
	}
	stack[0] = 0
}

// splitAt is where the subscriptions subs divide, with their events d
// bytes past them (negative: before), and how many events those before
// it get. The event of each from split on begins before it, so it lands
// on none after it, nor on any before the one before split: answered in
// order, those it may overwrite are read already, or kept aside. The
// event of each before split begins at it or after, so it lands on none
// before it: answered backwards, those it may overwrite are read already.
// (Where an event begins less where its subscription does only falls,
// by 16 or 48 bytes a subscription, as events are 32 bytes and
// subscriptions 48.) It reads only the subscriptions' types, and reports
// false once the call must stop.
func splitAt(ctx context.Context, subs []byte, descriptors bool, d int64) (split, before uint32, ok bool) {
	n := uint32(len(subs) / 48)
	for split = 0; split < n; split++ {
		if d+32*int64(before)-48*int64(split) < 0 {
			break
		}
		if split%stopEvery == stopEvery-1 && ctx.Err() != nil {
			return 0, 0, false
		}
		if subs[split*48+8] != eventClock || !descriptors {
			before++
		}
	}
	return split, before, true
}

// answering writes the events of one poll_oneoff's subscriptions.
type answering struct {
	p           polling
	ctx         context.Context
	mod         api.Module
	descriptors bool   // some subscription is to a descriptor: clocks get no event
	events      []byte // where the events go
	looked      uint32 // subscriptions answered, for the stop check
}

// answer writes the event of the subscription s (to the event *count,
// counting it, or, backwards, to the one before, counting down); a clock
// beside descriptors gets none. It reports false once the call must stop.
func (a *answering) answer(s []byte, count *uint32, backwards bool) bool {
	a.looked++
	if a.looked%stopEvery == 0 && a.ctx.Err() != nil {
		return false
	}
	typ := s[8]
	if typ == eventClock && a.descriptors {
		return true
	}
	var errno uint16
	if typ != eventClock {
		fd, ok := a.p.fds.moves.translate(a.mod, binary.LittleEndian.Uint32(s[16:]))
		need := rightFdRead
		if typ == eventFdWrite {
			need = rightFdWrite
		}
		switch {
		case !ok, !isOpen(a.ctx, a.mod, a.p.advise, fd):
			errno = errnoBadf
		case !a.p.fds.has(a.mod, fd, need):
			errno = errnoNotcapable
		}
	}
	// The event may overwrite the subscription: its userdata is read
	// first.
	var userdata [8]byte
	copy(userdata[:], s)
	c := *count
	if backwards {
		c--
	}
	e := a.events[c*32 : c*32+32]
	clear(e)
	copy(e, userdata[:])
	binary.LittleEndian.PutUint16(e[8:], errno)
	e[10] = typ
	if backwards {
		*count = c
	} else {
		*count = c + 1
	}
	return true
}

// checkSubscriptions checks subs as wazero does, in order: a clock with a
// flag but abstime EINVAL, one of a clock now cannot read EINVAL (wazero's
// checked that only with abstime), a descriptor past int32's EBADF, an unknown type EINVAL. It
// reports whether any subscribes to a descriptor and, when some clock has
// to wait (wazero waits for none when the shortest is 0 or, read as
// int64, negative; an abstime clock waits for its time less now's), the
// place of the first of the shortest, or -1. Once the call must stop it
// is EINTR.
func checkSubscriptions(ctx context.Context, subs []byte, now func(id uint32) (int64, bool)) (descriptors bool, shortest int, errno uint64) {
	shortest = -1
	least := int64(math.MaxInt64)
	now = knownClocks(now)
	for i := 0; i < len(subs); i += 48 {
		if i/48%stopEvery == stopEvery-1 && ctx.Err() != nil {
			return false, -1, errnoIntr
		}
		s := subs[i : i+48]
		switch s[8] {
		case eventClock:
			t, ok := timeout(s, now)
			if !ok {
				return false, -1, errnoInval
			}
			if t < least {
				least, shortest = t, i/48
			}
		case eventFdRead, eventFdWrite:
			if int32(binary.LittleEndian.Uint32(s[16:])) < 0 {
				return false, -1, errnoBadf
			}
			descriptors = true
		default:
			return false, -1, errnoInval
		}
	}
	if least <= 0 {
		shortest = -1
	}
	return descriptors, shortest, 0
}

// knownClocks is now, asking it again only for a clock id other than the
// one it was last asked for: a guest's subscriptions, tens of millions
// of them at most, are mostly of one clock.
func knownClocks(now func(id uint32) (int64, bool)) func(id uint32) (int64, bool) {
	var (
		asked  bool
		lastID uint32
		lastT  int64
		lastOK bool
	)
	return func(id uint32) (int64, bool) {
		if !asked || id != lastID {
			asked, lastID = true, id
			lastT, lastOK = now(id)
		}
		return lastT, lastOK
	}
}

// timeout is how long the clock subscription s waits: its timeout, or
// with the flag abstime its time less the clock's now (false for a clock
// now cannot read, with or without abstime, as clock_nanosleep(2) of a
// clock Linux has not is EINVAL; and for any other flag).
func timeout(s []byte, now func(id uint32) (int64, bool)) (int64, bool) {
	t := int64(binary.LittleEndian.Uint64(s[24:]))
	switch binary.LittleEndian.Uint16(s[40:]) {
	case 0:
		if _, ok := now(binary.LittleEndian.Uint32(s[16:])); !ok {
			return 0, false
		}
		return t, true
	case subscriptionClockAbstime:
		n, ok := now(binary.LittleEndian.Uint32(s[16:]))
		if !ok {
			return 0, false
		}
		if uint64(t) < uint64(n) {
			return 0, true // come already
		}
		return int64(min(uint64(t)-uint64(n), math.MaxInt64)), true
	}
	return 0, false
}

// subscriptionClockAbstime is WASI preview 1's flag of a clock
// subscription whose timeout is a time of its clock.
const subscriptionClockAbstime = 1

// now is the time the clock id of mod reads (wazero's clock_time_get),
// false for an id no clock has.
func (p polling) now(ctx context.Context, mod api.Module, id uint32) (int64, bool) {
	var t uint64
	errno := scratch(mod, 8, func(mem api.Memory) uint64 {
		stack := []uint64{uint64(id), 0, 0}
		p.clock.Call(ctx, mod, stack)
		t, _ = mem.ReadUint64Le(0)
		return stack[0]
	})
	return int64(t), errno == 0
}

// wait has wazero's poll_oneoff wait for the clock sub alone, with its own
// sleep (which, with the real clock, ends when the call must stop, see
// sleeper). It is given a copy of sub in scratch memory, where it writes
// its event and count too; an abstime clock as the time it has to wait.
func (p polling) wait(ctx context.Context, mod api.Module, sub []byte, now func(id uint32) (int64, bool)) uint64 {
	clock := append([]byte(nil), sub...)
	if t, ok := timeout(clock, now); ok {
		binary.LittleEndian.PutUint64(clock[24:], uint64(t))
		binary.LittleEndian.PutUint16(clock[40:], 0)
	}
	return scratch(mod, 48+32+4, func(mem api.Memory) uint64 {
		mem.Write(0, clock)
		stack := []uint64{0, 48, 1, 48 + 32}
		p.poll.Call(ctx, mod, stack)
		return stack[0]
	})
}

// WASI preview 1's errnos fault, intr, inval and notsup.
const (
	errnoFault  = 21
	errnoIntr   = 27
	errnoInval  = 28
	errnoNotsup = 58
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
