package sandbox

import "context"

// Compile compiles a module to check it (see Runtime.compile): the probe,
// at the default memory limit, or for a module Load compiles, at the limit
// of the first policy prepared for it if one was by then and that limit
// holds the module (otherwise at the default, so that Load answers as
// Compile does and that policy's calls report the limit). Calls under a
// policy with another limit compile it again for theirs (decoding and
// validating it again), and wazero keeps a decoded form of the module for
// each (its code bodies: megabytes for a Go module). A probe no call or
// preparation has used is closed as soon as the module is compiled for
// another limit; one that was used stays, like any other.

// probeMade records that m's compiled module at pages is the probe.
func (m *Module) probeMade(pages uint32) {
	m.r.mu.Lock()
	m.probe = pages
	m.r.mu.Unlock()
}

// usedLocked records that the compiled module at pages is being used, so
// that it is no unused probe. The caller holds m.r.mu.
func (m *Module) usedLocked(pages uint32) {
	if m.probe == pages {
		m.probe = 0
	}
}

// dropProbeLocked takes the unused probe from m.compiled, now that the
// module is compiled at pages, and returns it to be closed (nil if none).
// The caller holds m.r.mu.
func (m *Module) dropProbeLocked(pages uint32) (closeIt func()) {
	cm, ok := m.compiled[m.probe]
	if m.probe == 0 || m.probe == pages || !ok {
		return func() {}
	}
	delete(m.compiled, m.probe)
	m.probe = 0
	return func() { cm.Close(context.Background()) }
}
