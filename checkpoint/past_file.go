package checkpoint

import "os"

// openPast opens the agent's past file (name) for appending. While this
// store holds the agent's lock the file stays open, for the next round's
// past, until the lock is released or the agent removed, and done does
// nothing; otherwise done closes it.
func (s *FileStore) openPast(id, name string) (f *os.File, done func() error, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.held[id]
	if l != nil && l.past != nil {
		return l.past, noClose, nil
	}
	f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if l == nil {
		return f, f.Close, nil
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
