package sandbox

import (
	"context"
	"runtime/debug"
)

// Trim lets go of the memory the runtime keeps only to make later calls
// quicker, for a process about to wait long (for a person to decide): the
// spare instances of every module, and then the Go heap's free pages,
// returned to the system. A call after it makes its instance when it
// comes, and its module's spares are made again after it.
func (r *Runtime) Trim() {
	r.mu.Lock()
	mods := make([]*Module, 0, len(r.modules))
	for _, m := range r.modules {
		mods = append(mods, m)
	}
	r.mu.Unlock()
	for _, m := range mods {
		m.dropSpares()
	}
	debug.FreeOSMemory()
}

// dropSpares closes the spares of every snapshot of m.
func (m *Module) dropSpares() {
	if m.pre == nil {
		return
	}
	m.pre.mu.Lock()
	snaps := make([]*snapshot, 0, len(m.pre.snaps))
	for _, s := range m.pre.snaps {
		snaps = append(snaps, s)
	}
	m.pre.mu.Unlock()
	for _, s := range snaps {
		s.spares.drop()
	}
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
