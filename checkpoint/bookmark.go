package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Bookmark is a named copy of an agent's boundary, kept so that the agent
// can be forked from it later: its state then, and the digest of the blob
// that holds its workspace then.
type Bookmark struct {
	Label     string    `cbor:"1,keyasint"`
	Round     int       `cbor:"2,keyasint"`
	Time      time.Time `cbor:"3,keyasint"`
	State     *State    `cbor:"4,keyasint"`
	Workspace string    `cbor:"5,keyasint,omitempty"`
	// Pending are the user's messages given after the boundary that the
	// model had not answered: the prompt of a round that was open when
	// the bookmark was taken, or, of a past round's boundary, the prompt
	// the next round began with. A fork asks the model with them.
	Pending []conversation.Message `cbor:"6,keyasint,omitempty"`
}

// CheckLabel refuses a bookmark label that could not name one file.
func CheckLabel(label string) error {
	if err := CheckID(label); err != nil {
		return fmt.Errorf("bookmark label %q: want 1 to 128 of letters, digits, '.', '_' and '-', not starting with '.'", label)
	}
	return nil
}

func (b *Bookmark) check(agent string) error {
	if b.State == nil {
		return fmt.Errorf("bookmark %q of agent %q has no state", b.Label, agent)
	}
	if b.State.Schema > schemaVersion {
		return &FutureSchemaError{File: "bookmark " + b.Label + " of agent " + agent, Version: b.State.Schema, Supported: schemaVersion}
	}
	return nil
}

// PutBookmark keeps a bookmark of the agent, crash-atomically, replacing
// one of the same label. ErrNotFound for an unknown agent.
func (s *FileStore) PutBookmark(agent string, b Bookmark) error {
	if err := CheckLabel(b.Label); err != nil {
		return err
	}
	if !s.Exists(agent) {
		return fmt.Errorf("agent %q: %w", agent, ErrNotFound)
	}
	dir := filepath.Join(s.dir, "agents", agent, "bookmarks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("bookmark agent %q: %w", agent, err)
	}
	data, err := encMode.Marshal(b)
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, b.Label+".cbor"), data); err != nil {
		return fmt.Errorf("bookmark agent %q: %w", agent, err)
	}
	return nil
}

// Bookmarks lists the agent's bookmarks, oldest first. It takes no lock:
// a bookmark removed while it reads (by `cairn gc --keep-bookmarks`,
// under the agent's lock) is listed or not, and never fails it.
func (s *FileStore) Bookmarks(agent string) ([]Bookmark, error) {
	if !s.Exists(agent) {
		return nil, fmt.Errorf("agent %q: %w", agent, ErrNotFound)
	}
	dir := filepath.Join(s.dir, "agents", agent, "bookmarks")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bookmarks of agent %q: %w", agent, err)
	}
	var out []Bookmark
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".cbor") {
			continue // a temp file a crash left
		}
		name := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing (gc's --keep-bookmarks): no longer there
		}
		if err != nil {
			return nil, err
		}
		var b Bookmark
		if err := decMode.Unmarshal(data, &b); err != nil {
			return nil, &CorruptError{File: name, Reason: err.Error()}
		}
		if err := b.check(agent); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	sortBookmarks(out)
	return out, nil
}

func sortBookmarks(bs []Bookmark) {
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].Time.Before(bs[j].Time) })
}

// PutBookmark keeps a bookmark of the agent in memory.
func (s *MemStore) PutBookmark(agent string, b Bookmark) error {
	if err := CheckLabel(b.Label); err != nil {
		return err
	}
	if !s.Exists(agent) {
		return fmt.Errorf("agent %q: %w", agent, ErrNotFound)
	}
	data, err := encMode.Marshal(b)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agent(agent)
	if a.bookmarks == nil {
		a.bookmarks = map[string][]byte{}
	}
	a.bookmarks[b.Label] = data
	return nil
}

// Bookmarks lists the agent's bookmarks, oldest first.
func (s *MemStore) Bookmarks(agent string) ([]Bookmark, error) {
	if !s.Exists(agent) {
		return nil, fmt.Errorf("agent %q: %w", agent, ErrNotFound)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Bookmark
	for _, data := range s.agent(agent).bookmarks {
		var b Bookmark
		if err := decMode.Unmarshal(data, &b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	sortBookmarks(out)
	return out, nil
}
