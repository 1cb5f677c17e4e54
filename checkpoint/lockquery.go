package checkpoint

import "path/filepath"

// LockQuery says whether a process runs an agent now — Summary's Locked —
// without reading the agent's state, which Summary recovers in full. A
// follower of a run's event history asks it every poll to learn when the
// run has ended; a Summary per poll would decode the whole state each
// time. FileStore, MemStore and pgstore implement it, each by the rule
// its Summary uses.
type LockQuery interface {
	// Locked reports whether a process holds the agent's lock: false for
	// an agent nobody runs, and for one with no state. An id that cannot
	// be an agent's is an error matching ErrInvalidID.
	Locked(agent string) (bool, error)
}

var (
	_ LockQuery = (*FileStore)(nil)
	_ LockQuery = (*MemStore)(nil)
)

// Locked tries the agent's flock, as Summary does: a few opens and a
// flock, no read of the agent's files.
func (s *FileStore) Locked(id string) (bool, error) {
	if err := CheckID(id); err != nil {
		return false, err
	}
	return lockHeld(filepath.Join(s.dir, "agents", id)), nil
}

// Locked reports whether the agent's lock is taken.
func (s *MemStore) Locked(id string) (bool, error) {
	if err := CheckID(id); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	return ok && a.locked, nil
}
