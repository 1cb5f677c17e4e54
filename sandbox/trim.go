package sandbox

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/tetratelabs/wazero"
)

// Trim lets go of the memory the runtime keeps only to make later calls
// quicker, for a process about to wait long (for a person to decide):
//
//   - the spare instances of every module;
//   - the snapshots fast-mode modules are restored from: their images,
//     and the memories of closed instances kept to be reset;
//   - the compiled code of every module the compile cache on disk holds,
//     with wazero's decoded form of it;
//   - and that module's source, put away on disk (see source);
//
// and then the Go heap's free pages, returned to the system. Nothing a
// call needs is lost: a module's next call reads its source back, loads
// its code from the compile cache again (decoding the module, reading the
// machine code, no compiling), takes its snapshot again, and makes its
// instance; its spares are made again after it. That first call costs
// what a module's first call in a warm process costs, and fails with the
// error of reading the source back if the disk fails it.
//
// A module the compile cache does not hold (no cache directory, or the
// interpreter) keeps its code, which would cost compiling again. Trim
// waits for the calls running and the work begun for later calls to end
// before it lets go of what they use, and calls that come meanwhile wait
// for it; the spares are let go of at once. It is safe for concurrent use,
// and does nothing once the Runtime is closing.
func (r *Runtime) Trim() {
	if r.isClosed() {
		return
	}
	for _, m := range r.moduleList() {
		m.dropSpares() // at once: a spare is no call's
	}
	r.trimming.Lock()
	r.letGo()
}

// TrimIdle is Trim for a process that runs other work beside the one
// about to wait, as a server of many agents does: it lets go of the same,
// but only if no call, and no work for later calls, has run for quiet and
// none is running now, and it never waits. It reports whether it trimmed:
// false too when there was nothing to let go of, which costs nothing.
// An agent that starts to wait for a person among others that are busy
// leaves their spares, snapshots and compiled code as they are.
func (r *Runtime) TrimIdle(quiet time.Duration) bool {
	if r.isClosed() || time.Since(time.Unix(0, r.lastUse.Load())) < quiet {
		return false
	}
	if !r.trimming.TryLock() {
		return false
	}
	if !r.trimmable() {
		r.trimming.Unlock() // nothing to let go of, nor to return to the system
		return false
	}
	r.letGo()
	return true
}

// trimmable reports whether letGo would let go of anything: a snapshot
// (with its spares), or compiled code the compile cache holds.
func (r *Runtime) trimmable() bool {
	for _, m := range r.moduleList() {
		if len(m.snapshots()) > 0 {
			return true
		}
		r.mu.Lock()
		compiled := len(m.compiled)
		r.mu.Unlock()
		if compiled > 0 && m.codeCached() {
			return true
		}
	}
	return false
}

// letGo, with r.trimming held, lets go of every module's spares,
// snapshots and compiled code, puts their source away, releases
// r.trimming, and returns the Go heap's free pages to the system.
func (r *Runtime) letGo() {
	for _, m := range r.moduleList() {
		m.dropSpares()
		m.dropSnapshots()
		if m.dropCompiled() {
			m.putAwaySource(r.cacheDir)
		}
	}
	r.trimming.Unlock()
	debug.FreeOSMemory()
}

// isClosed says whether the Runtime is closing.
func (r *Runtime) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Kept is what a Runtime keeps for later calls, as Trim counts it.
type Kept struct {
	Spares    int // spare instances ready
	Snapshots int // snapshots of fast-mode modules
	Compiled  int // compiled modules (one per module and memory limit)
}

// Kept counts what the runtime keeps now for later calls.
func (r *Runtime) Kept() Kept {
	var k Kept
	for _, m := range r.moduleList() {
		r.mu.Lock()
		k.Compiled += len(m.compiled)
		r.mu.Unlock()
		for _, s := range m.snapshots() {
			k.Snapshots++
			k.Spares += s.spares.readyCount()
		}
	}
	return k
}

// using holds off Trim from what a call, or work for later calls, uses:
// the module's compiled code and snapshots. Call the function it returns
// when done.
func (r *Runtime) using() func() {
	r.trimming.RLock()
	return r.doneUsing
}

// doneUsing ends what using began, and notes when.
func (r *Runtime) doneUsing() {
	r.lastUse.Store(time.Now().UnixNano())
	r.trimming.RUnlock()
}

// moduleList is every module compiled.
func (r *Runtime) moduleList() []*Module {
	r.mu.Lock()
	defer r.mu.Unlock()
	mods := make([]*Module, 0, len(r.modules))
	for _, m := range r.modules {
		mods = append(mods, m)
	}
	return mods
}

// snapshots is every snapshot of m.
func (m *Module) snapshots() []*snapshot {
	if m.pre == nil {
		return nil
	}
	m.pre.mu.Lock()
	defer m.pre.mu.Unlock()
	snaps := make([]*snapshot, 0, len(m.pre.snaps))
	for _, s := range m.pre.snaps {
		snaps = append(snaps, s)
	}
	return snaps
}

// dropSpares closes the spares of every snapshot of m.
func (m *Module) dropSpares() {
	for _, s := range m.snapshots() {
		s.spares.drop()
	}
}

// dropSnapshots forgets every snapshot of m, closing its spares for good
// and unmapping its idle memories; the image itself goes with the last
// reference to it (see newMemoryImage). A call takes the snapshot again.
func (m *Module) dropSnapshots() {
	if m.pre == nil {
		return
	}
	m.pre.mu.Lock()
	snaps := m.pre.snaps
	m.pre.snaps = map[snapshotKey]*snapshot{}
	m.pre.mu.Unlock()
	for _, s := range snaps {
		s.spares.close()
		s.image.release()
	}
}

// codeCached reports whether the compile cache on disk holds m's compiled
// code, so that it can be let go of and loaded again.
func (m *Module) codeCached() bool { return !m.interpret && m.r.cached(m.digest) }

// dropCompiled closes m's compiled modules when the compile cache on disk
// holds the module, so that compiledFor loads them from it again, and
// tells whether it did.
func (m *Module) dropCompiled() bool {
	if !m.codeCached() {
		return false
	}
	m.r.mu.Lock()
	compiled := m.compiled
	m.compiled = map[uint32]wazero.CompiledModule{}
	m.r.mu.Unlock()
	for _, cm := range compiled {
		cm.Close(context.Background())
	}
	// The list of imports names the last compiled module checked, which
	// would keep its decoded form reachable.
	m.imports.last.Store(nil)
	return true
}

// drop closes every ready spare. Spares being made are kept when done.
func (ss *spares) drop() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for key, list := range ss.ready {
		for _, s := range list {
			s.mod.Close(context.Background())
		}
		delete(ss.ready, key)
	}
	ss.order = nil
}

// close drops every spare, and any made later as soon as it is made: the
// snapshot they are of is gone.
func (ss *spares) close() {
	ss.drop()
	ss.mu.Lock()
	ss.closed = true
	ss.mu.Unlock()
}

// readyCount counts the ready spares.
func (ss *spares) readyCount() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.order)
}
