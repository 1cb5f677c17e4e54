package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
)

// MemStore keeps agents in memory, encoded as the file store encodes
// them, so what it returns has been through the codec. For tests and for
// embedders that need no durability.
type MemStore struct {
	mu     sync.Mutex
	agents map[string]*memAgent
	blobs  map[string][]byte
	// workflows and memory hold encoded records (workflow_file.go,
	// memory_file.go).
	workflows map[string][]byte
	memory    map[string]map[string][]byte
}

type memAgent struct {
	snapshot  []byte   // encoded State
	journal   [][]byte // encoded records, with their types
	types     []RecordType
	events    []byte
	bookmarks map[string][]byte // encoded Bookmarks by label
	locked    bool
	pause     bool     // a pause is requested
	pasts     [][]byte // encoded Pasts, in the order put
}

var _ Store = (*MemStore)(nil)

// NewMemStore makes an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{agents: map[string]*memAgent{}, blobs: map[string][]byte{}}
}

func (s *MemStore) agent(id string) *memAgent {
	a, ok := s.agents[id]
	if !ok {
		a = &memAgent{}
		s.agents[id] = a
	}
	return a
}

type memLock struct {
	s  *MemStore
	id string
}

func (l memLock) Unlock() error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.agent(l.id).locked = false
	return nil
}

// Lock takes an agent's lock within this process.
func (s *MemStore) Lock(id string, h Holder) (Lock, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agent(id)
	if a.locked {
		return nil, &LockedError{Agent: id}
	}
	a.locked = true
	return memLock{s, id}, nil
}

// Exists reports whether the agent has state.
func (s *MemStore) Exists(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	return ok && a.snapshot != nil
}

// Create starts an agent.
func (s *MemStore) Create(id string, st *State) (Log, error) {
	if s.Exists(id) {
		return nil, fmt.Errorf("create agent %q: %w", id, ErrExists)
	}
	b, err := encodeState(st)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.agent(id).snapshot = b
	s.mu.Unlock()
	return s.log(id, &Recovered{State: st})
}

// Remove forgets an agent's state, keeping its event history and bookmarks.
func (s *MemStore) Remove(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agent(id)
	a.snapshot, a.journal, a.types, a.pasts = nil, nil, nil, nil
	return nil
}

// Open recovers an agent for writing.
func (s *MemStore) Open(id string) (*Recovered, Log, error) {
	rec, err := s.Read(id)
	if err != nil {
		return nil, nil, err
	}
	l, err := s.log(id, rec)
	return rec, l, err
}

// Read recovers an agent.
func (s *MemStore) Read(id string) (*Recovered, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	if !ok || a.snapshot == nil {
		return nil, fmt.Errorf("agent %q: %w", id, ErrNotFound)
	}
	st, err := decodeState(a.snapshot)
	if err != nil {
		return nil, err
	}
	r := &replay{st: st}
	for i, b := range a.journal {
		rec, err := decodeRecord(a.types[i], b)
		if err == nil {
			err = r.add(rec)
		}
		if err != nil {
			return nil, err
		}
	}
	return &Recovered{State: st, Tail: r.pending}, nil
}

func (s *MemStore) log(id string, rec *Recovered) (Log, error) {
	return &memLog{s: s, id: id, replay: replay{st: rec.State, pending: rec.Tail}}, nil
}

// List summarises every agent.
func (s *MemStore) List() ([]Summary, error) {
	s.mu.Lock()
	var ids []string
	for id, a := range s.agents {
		if a.snapshot != nil {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	sort.Strings(ids)
	out := make([]Summary, 0, len(ids))
	for _, id := range ids {
		sum, _ := s.Summary(id)
		out = append(out, sum)
	}
	return out, nil
}

// Summary summarises one agent.
func (s *MemStore) Summary(id string) (Summary, error) {
	s.mu.Lock()
	a, ok := s.agents[id]
	exists := ok && a.snapshot != nil
	locked := ok && a.locked
	s.mu.Unlock()
	if !exists {
		return Summary{}, fmt.Errorf("agent %q: %w", id, ErrNotFound)
	}
	sum := Summary{ID: id, Locked: locked}
	if rec, err := s.Read(id); err != nil {
		sum.Err = err
	} else {
		sum.fill(rec)
	}
	return sum, nil
}

// PutBlob stores content by digest.
func (s *MemStore) PutBlob(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	d := "sha256:" + hex.EncodeToString(sum[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blobs[d] = append([]byte(nil), data...)
	return d, nil
}

// Blob returns content by digest.
func (s *MemStore) Blob(digest string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[digest]
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", digest, ErrNotFound)
	}
	return b, nil
}

type memLog struct {
	s      *MemStore
	id     string
	replay replay
}

func (l *memLog) Append(recs ...Record) error {
	for _, rec := range recs {
		b, err := encodeRecord(rec)
		if err != nil {
			return err
		}
		l.s.mu.Lock()
		a := l.s.agent(l.id)
		a.journal, a.types = append(a.journal, b), append(a.types, rec.Type)
		l.s.mu.Unlock()
		if err := l.replay.add(rec); err != nil {
			return err
		}
	}
	return nil
}

func (l *memLog) Commit(recs ...Record) (int64, error) {
	if _, err := commitRecord(recs); err != nil {
		return 0, err
	}
	return 0, l.Append(recs...)
}

func (l *memLog) Sync() error   { return nil }
func (l *memLog) State() *State { return l.replay.st }
func (l *memLog) Close() error  { return nil }
