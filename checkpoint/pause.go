package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Pauser keeps pause requests: a mark beside an agent, outside its lock,
// that asks whatever process runs the agent to stop at its next boundary.
// The requester does not take the lock (the runner holds it); the runner
// looks for the mark after a commit (at most every 10 ms) and clears it
// when it obeys. A Store that keeps no requests does not implement
// Pauser; FileStore, MemStore and pgstore do.
type Pauser interface {
	// RequestPause marks the agent; marking it twice is one request.
	RequestPause(agent string) error
	// PauseRequested reports whether the agent is marked.
	PauseRequested(agent string) (bool, error)
	// ClearPause removes the mark; clearing an unmarked agent is no error.
	ClearPause(agent string) error
}

var (
	_ Pauser = (*FileStore)(nil)
	_ Pauser = (*MemStore)(nil)
)

// pauseFile is the name of the mark in an agent's directory.
const pauseFile = "pause"

// RequestPause writes agents/<id>/pause atomically. ErrNotFound when the
// agent has no state.
func (s *FileStore) RequestPause(id string) error {
	dir, err := s.agentDir(id)
	if err != nil {
		return err
	}
	if !s.Exists(id) {
		return fmt.Errorf("request pause of agent %s: %w", id, ErrNotFound)
	}
	if err := writeAtomic(filepath.Join(dir, pauseFile), nil); err != nil {
		return fmt.Errorf("request pause of agent %s: %w", id, err)
	}
	return nil
}

// PauseRequested looks for agents/<id>/pause with one stat.
func (s *FileStore) PauseRequested(id string) (bool, error) {
	dir, err := s.agentDir(id)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(filepath.Join(dir, pauseFile))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("look for a pause request of agent %s: %w", id, err)
}

// ClearPause removes agents/<id>/pause. The removal is not synced: a mark
// that comes back after a crash is cleared by the next run at its start.
func (s *FileStore) ClearPause(id string) error {
	dir, err := s.agentDir(id)
	if err != nil {
		return err
	}
	err = os.Remove(filepath.Join(dir, pauseFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear the pause request of agent %s: %w", id, err)
	}
	return nil
}

// RequestPause marks the agent. ErrNotFound when it has no state.
func (s *MemStore) RequestPause(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	if !ok || a.snapshot == nil {
		return fmt.Errorf("request pause of agent %s: %w", id, ErrNotFound)
	}
	a.pause = true
	return nil
}

// PauseRequested reports whether the agent is marked.
func (s *MemStore) PauseRequested(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	return ok && a.pause, nil
}

// ClearPause removes the mark.
func (s *MemStore) ClearPause(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.agents[id]; ok {
		a.pause = false
	}
	return nil
}
