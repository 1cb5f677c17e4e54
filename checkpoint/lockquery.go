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

// HolderQuery says who holds an agent's lock now, without taking it:
// whether it is a run (its Holder.Run a run's id) or a command that holds
// the lock a moment (a decision journaled, a snapshot). locked is
// Locked's answer; h is the holder, zero when it cannot be read. FileStore
// and pgstore implement it; MemStore keeps no holder.
type HolderQuery interface {
	Holder(agent string) (h Holder, locked bool, err error)
}

var (
	_ LockQuery   = (*FileStore)(nil)
	_ LockQuery   = (*MemStore)(nil)
	_ HolderQuery = (*FileStore)(nil)
)

// Holder reads the holder the lock file names, when the lock is held.
func (s *FileStore) Holder(id string) (Holder, bool, error) {
	if err := CheckID(id); err != nil {
		return Holder{}, false, err
	}
	dir := filepath.Join(s.dir, "agents", id)
	if !lockHeld(dir) {
		return Holder{}, false, nil
	}
	if h, ok := readHolder(filepath.Join(dir, "lock")); ok {
		return h, true, nil
	}
	return Holder{}, true, nil
}

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
