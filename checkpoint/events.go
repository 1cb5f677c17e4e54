package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The event history is what an agent's runs reported as they went: lines
// the host writes, one per event, that `cairn events` plays back. It sits
// beside the journal, not in it: it is not part of the loop state, nothing
// is recovered from it, and it is not synced round by round, so after a
// power cut its last lines may be missing while the journal is whole.

// eventsFile is the event history's file in an agent's directory.
const eventsFile = "events.jsonl"

// Events opens the agent's event history for appending. The caller holds
// the agent's lock. A history whose last line a crash cut short gets a
// newline first, so that the line cut short stays a line of its own,
// which a reader reports, and does not swallow the first line appended
// after it.
func (s *FileStore) Events(id string) (io.WriteCloser, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, eventsFile), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open event history of agent %q: %w", id, err)
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("open event history of agent %q: %w", id, err)
	}
	return f, nil
}

// DropEvents removes the agent's event history file, if there is one,
// and syncs the directory, so that a power cut does not bring back the
// lines removed under a history written after them.
func (s *FileStore) DropEvents(id string) error {
	dir, err := s.agentDir(id)
	if err != nil {
		return err
	}
	err = os.Remove(filepath.Join(dir, eventsFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("remove event history of agent %q: %w", id, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("remove event history of agent %q: %w", id, err)
	}
	return nil
}

// endLine appends a newline to f, opened for appending, unless it is empty
// or ends with one.
func endLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	return err
}

// ReadEvents opens the agent's event history for reading from its start.
// ErrNotFound when the agent has none.
func (s *FileStore) ReadEvents(id string) (io.ReadCloser, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, eventsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("event history of agent %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read event history of agent %q: %w", id, err)
	}
	return f, nil
}

// Events appends to the agent's event history in memory.
func (s *MemStore) Events(id string) (io.WriteCloser, error) {
	return memEvents{s: s, id: id}, nil
}

type memEvents struct {
	s  *MemStore
	id string
}

func (w memEvents) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	a := w.s.agent(w.id)
	a.events = append(a.events, p...)
	return len(p), nil
}

func (memEvents) Close() error { return nil }

// DropEvents forgets the agent's event history.
func (s *MemStore) DropEvents(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.agents[id]; ok {
		a.events = nil
	}
	return nil
}

// ReadEvents returns a copy of the agent's event history.
func (s *MemStore) ReadEvents(id string) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	if !ok || a.events == nil {
		return nil, fmt.Errorf("event history of agent %q: %w", id, ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(bytes.Clone(a.events))), nil
}

// EventsFrom is a store whose ReadEvents returns a copy of the history as
// it was, which later appends do not reach (MemStore, pgstore), unlike a
// file read on. A follower of such a store's history reads what was added
// after the bytes it has with ReadEventsFrom.
type EventsFrom interface {
	// ReadEventsFrom reads the agent's event history from its offset-th
	// byte: nothing when it holds no more, ErrNotFound when it has none.
	ReadEventsFrom(agent string, offset int64) (io.ReadCloser, error)
}

var _ EventsFrom = (*MemStore)(nil)

// ReadEventsFrom returns a copy of the agent's event history from its
// offset-th byte.
func (s *MemStore) ReadEventsFrom(id string, offset int64) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	if !ok || a.events == nil {
		return nil, fmt.Errorf("event history of agent %q: %w", id, ErrNotFound)
	}
	offset = min(max(offset, 0), int64(len(a.events)))
	return io.NopCloser(bytes.NewReader(bytes.Clone(a.events[offset:]))), nil
}
