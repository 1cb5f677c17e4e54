package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
)

// pastFileOf opens the agent's past file for appending. While this store
// holds the agent's lock the file stays open, for the next round's past,
// until the lock is released or the agent removed, and done does nothing;
// otherwise done closes it. Before the file is opened the agent's state is
// looked for, and a torn tail cut away the first time since the lock was
// taken: a snapshot, once written, is replaced but never absent while the
// lock is held.
func (s *FileStore) pastFileOf(id string) (f *os.File, done func() error, err error) {
	s.mu.Lock()
	if l := s.held[id]; l != nil && l.past != nil {
		f = l.past
		s.mu.Unlock()
		return f, noClose, nil
	}
	s.mu.Unlock()
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, nil, err
	}
	if !s.Exists(id) {
		return nil, nil, fmt.Errorf("keep past of agent %q: %w", id, ErrNotFound)
	}
	name := filepath.Join(dir, pastFile)
	if err := s.cutPast(id, name); err != nil {
		return nil, nil, fmt.Errorf("keep past of agent %q: %w", id, err)
	}
	if f, done, err = s.openPast(id, name); err != nil {
		return nil, nil, fmt.Errorf("keep past of agent %q: %w", id, err)
	}
	return f, done, nil
}

// cutPast cuts the torn tail off the agent's past file name
// (cutTornPast), the first time since this store took the agent's lock.
func (s *FileStore) cutPast(id, name string) error {
	if _, ok := s.pastsChecked.Load(id); ok {
		return nil
	}
	if err := cutTornPast(name); err != nil {
		return err
	}
	s.pastsChecked.Store(id, true)
	return nil
}

// holds reports whether this store holds the agent's lock.
func (s *FileStore) holds(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[id] != nil
}

// openPast opens the past file name of the agent, keeping it open in the
// agent's lock when this store holds it.
func (s *FileStore) openPast(id, name string) (*os.File, func() error, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.held[id]
	if l == nil {
		return f, f.Close, nil
	}
	if l.past != nil { // opened meanwhile
		f.Close()
		return l.past, noClose, nil
	}
	l.past = f
	return f, noClose, nil
}

func noClose() error { return nil }

// closePast closes the past file l keeps open, if any. The caller holds
// s.mu.
func (s *FileStore) closePast(l *fileLock) {
	if l != nil && l.past != nil {
		l.past.Close()
		l.past = nil
	}
}
