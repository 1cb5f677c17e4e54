package sandbox

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// stdioMoves is what cairn records of the stdio an instance's guest moved
// with fd_renumber, which wazero cannot do: it keeps stdin, stdout and
// stderr at 0, 1 and 2 for good. So cairn keeps them there and gives the
// guest the number it moved one to as another name of it (alias), and
// takes the one it left from it (hidden): a descriptor the guest names is
// first translated to wazero's (see translate), and is EBADF when hidden.
//
// wazero's file at an alias's number is not closed but kept, out of the
// guest's reach, so that wazero never gives that number to a file it
// opens, which the guest would find already taken; it is closed with the
// alias. A hidden number is wazero's stdio, open, so wazero never gives
// it out either; once that stdio is closed it is hidden no more. A guest
// sees no number taken twice, and its descriptors stay the files wazero
// has open (within the call's budget of open files), at most three of
// them its stdio under other names.
type stdioMoves struct {
	alias  map[uint32]uint32 // the guest's number → wazero's stdio it names
	hidden map[uint32]bool   // wazero's stdio the guest no longer has at its number
}

// moved holds, for each instance that moved stdio, its stdioMoves; an
// instance's goes with it (see descriptors.forget). Like descriptors, it
// is used by the instance's one thread.
type moved struct {
	instances sync.Map     // api.Module → *stdioMoves
	n         atomic.Int64 // how many instances have moves: while none, a call looks no further
}

// of returns mod's moves, or nil when it has moved no stdio.
func (m *moved) of(mod api.Module) *stdioMoves {
	if m.n.Load() == 0 {
		return nil
	}
	if v, ok := m.instances.Load(mod); ok {
		return v.(*stdioMoves)
	}
	return nil
}

// made returns mod's moves, making them at the first move.
func (m *moved) made(mod api.Module) *stdioMoves {
	if s := m.of(mod); s != nil {
		return s
	}
	s := &stdioMoves{alias: map[uint32]uint32{}, hidden: map[uint32]bool{}}
	m.instances.Store(mod, s)
	m.n.Add(1)
	return s
}

// forget drops mod's moves, which is closed.
func (m *moved) forget(mod api.Module) {
	if _, ok := m.instances.LoadAndDelete(mod); ok {
		m.n.Add(-1)
	}
}

// translate is wazero's descriptor for the guest's fd in mod, or false
// when the guest has no file there that wazero does (a stdio it moved).
func (m *moved) translate(mod api.Module, fd uint32) (uint32, bool) {
	s := m.of(mod)
	if s == nil {
		return fd, true
	}
	if w, ok := s.alias[fd]; ok {
		return w, true
	}
	return fd, !s.hidden[fd]
}

// translating is a WASI function whose descriptors (its parameters at)
// are translated from the guest's to wazero's before fn has them: one the
// guest does not have is EBADF, and fn does nothing.
type translating struct {
	fn    api.GoModuleFunction
	moved *moved
	at    []int
}

// Call implements api.GoModuleFunction.
func (t translating) Call(ctx context.Context, mod api.Module, stack []uint64) {
	if t.moved.of(mod) != nil {
		for _, i := range t.at {
			w, ok := t.moved.translate(mod, uint32(stack[i]))
			if !ok {
				stack[0] = errnoBadf
				return
			}
			stack[i] = uint64(w)
		}
	}
	t.fn.Call(ctx, mod, stack)
}

// descriptorParams are the places of the parameters of a WASI function,
// named params, that are descriptors.
func descriptorParams(name string, params []string) []int {
	var at []int
	for i, p := range params {
		if p == "fd" || p == "old_fd" || p == "new_fd" || (name == "fd_renumber" && p == "to") {
			at = append(at, i)
		}
	}
	return at
}

// closingMoved is fd_close of the guest's descriptor: a stdio moved to
// it is closed, with wazero's file kept at its number, and the alias goes.
type closingMoved struct {
	close api.GoModuleFunction // cairn's fd_close (closing)
	moved *moved
}

// Call implements api.GoModuleFunction.
func (c closingMoved) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd := uint32(stack[0])
	w, ok := c.moved.translate(mod, fd)
	if !ok {
		stack[0] = errnoBadf
		return
	}
	stack[0] = uint64(w)
	c.close.Call(ctx, mod, stack)
	if stack[0] == 0 && w != fd {
		c.unalias(ctx, mod, fd, w)
	}
}

// unalias drops the alias fd of the stdio w, which wazero closed: the
// file kept at fd is closed, and w is no longer hidden.
func (c closingMoved) unalias(ctx context.Context, mod api.Module, fd, w uint32) {
	s := c.moved.of(mod)
	delete(s.alias, fd)
	delete(s.hidden, w)
	c.close.Call(ctx, mod, []uint64{uint64(fd)})
}

// renumberingMoved is fd_renumber(fd, to) of the guest's descriptors: a
// stdio (wazero's 0, 1 or 2, reached by its number or an alias) moved
// onto an open descriptor is moved by cairn (see stdioMoves), closing the
// file at to as renumbering does, and any other file moved onto an alias
// replaces the stdio it names (ontoMoved), so that an alias only ever
// names wazero's stdio; everything else is renumbering's, on wazero's
// descriptors. A preopen is still not moved (ENOTSUP).
type renumberingMoved struct {
	r     renumbering          // cairn's fd_renumber
	close api.GoModuleFunction // cairn's fd_close (closing)
	moved *moved
}

// Call implements api.GoModuleFunction.
func (m renumberingMoved) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd, to := uint32(stack[0]), uint32(stack[1])
	wFd, okFd := m.moved.translate(mod, fd)
	wTo, okTo := m.moved.translate(mod, to)
	switch {
	case !okFd || !okTo:
		stack[0] = errnoBadf
	case fd != to && wFd < 3 && m.r.open(ctx, mod, wFd) && m.r.preopen(ctx, mod, wFd) && m.r.open(ctx, mod, wTo):
		stack[0] = m.moveStdio(ctx, mod, fd, wFd, to, wTo)
	case fd != to && wTo != to && m.r.open(ctx, mod, wFd) && !m.r.preopen(ctx, mod, wFd):
		stack[0] = m.ontoMoved(ctx, mod, wFd, to, wTo)
	default:
		stack[0], stack[1] = uint64(wFd), uint64(wTo)
		m.r.Call(ctx, mod, stack)
	}
}

// moveStdio gives the guest the stdio wFd (its fd) at to (wazero's wTo),
// both open.
func (m renumberingMoved) moveStdio(ctx context.Context, mod api.Module, fd, wFd, to, wTo uint32) uint64 {
	s := m.moved.made(mod)
	if wTo != to {
		// to names another stdio, which is closed, and hidden no more.
		if errno := m.closeFD(ctx, mod, wTo); errno != 0 {
			return errno
		}
		delete(s.hidden, wTo)
	}
	// Otherwise wazero's file at to is kept, out of reach, holding to.
	if wFd != fd {
		// fd was an alias: the file kept at its number is closed.
		delete(s.alias, fd)
		m.closeFD(ctx, mod, fd)
	} else {
		s.hidden[fd] = true
	}
	s.alias[to] = wFd
	return 0
}

// ontoMoved renumbers the file at wazero's fd (no stdio, no preopen)
// onto the guest's to, where the stdio wTo was moved: the stdio is
// closed, as any file at to is, and hidden no more, and the file takes
// to's place in wazero, where the file kept there was (see stdioMoves).
// Renumbered into wTo, it would leave to naming wTo, which, once the file
// moved on, wazero would give to the next file it opens, there under two
// numbers, only one of them the guest's.
func (m renumberingMoved) ontoMoved(ctx context.Context, mod api.Module, fd, to, wTo uint32) uint64 {
	s := m.moved.of(mod)
	if errno := m.closeFD(ctx, mod, wTo); errno != 0 {
		return errno
	}
	delete(s.hidden, wTo)
	delete(s.alias, to)
	stack := []uint64{uint64(fd), uint64(to)}
	m.r.Call(ctx, mod, stack)
	return stack[0]
}

func (m renumberingMoved) closeFD(ctx context.Context, mod api.Module, fd uint32) uint64 {
	stack := []uint64{uint64(fd)}
	m.close.Call(ctx, mod, stack)
	return stack[0]
}

// withMoves wraps, in ours, every WASI function of defs's that takes a
// descriptor so that it takes the guest's (see stdioMoves): fd_close and
// fd_renumber (r, cairn's) with what moving stdio needs of them.
// poll_oneoff translates the descriptors of its subscriptions itself.
func withMoves(ours map[string]api.GoModuleFunction, defs map[string]api.FunctionDefinition, theirs func(string) api.GoModuleFunction, r renumbering, m *moved) {
	closeFn := ours["fd_close"]
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		fn, ok := ours[name]
		if !ok {
			fn = theirs(name)
		}
		switch at := descriptorParams(name, defs[name].ParamNames()); {
		case name == "fd_close":
			ours[name] = closingMoved{close: closeFn, moved: m}
		case name == "fd_renumber":
			ours[name] = renumberingMoved{r: r, close: closeFn, moved: m}
		case len(at) > 0 && name != "poll_oneoff":
			ours[name] = translating{fn: fn, moved: m, at: at}
		}
	}
}
