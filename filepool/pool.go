package filepool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// DefaultMaxEntries is how many paths a pool tracks when Config.MaxEntries
// is zero.
const DefaultMaxEntries = 1024

// Config tunes a Pool. Its zero value is ready to use.
type Config struct {
	// MaxEntries bounds the tracked paths; past it, the entries of the
	// oldest rounds are forgotten. Zero means DefaultMaxEntries.
	MaxEntries int
}

var (
	// ErrClosed is returned by a closed Pool.
	ErrClosed = errors.New("file pool is closed")
	// ErrUntracked is returned for a path the pool has no entry for.
	ErrUntracked = errors.New("path is not tracked")
	// ErrUnreadable is matched when a path holds something a tool cannot
	// read as a regular file of the workspace.
	ErrUnreadable = errors.New("not a readable file of the workspace")
)

// Pool is the record of the files an agent has seen, bound to its
// workspace. It is safe for concurrent use.
type Pool struct {
	dir  string // the workspace, absolute with symlinks resolved
	root *os.Root
	max  int
	// open is held for reading while root is in use, for writing by Close.
	open sync.RWMutex

	mu       sync.Mutex
	entries  map[string]Entry
	watchers map[*Watcher]struct{}
	closed   bool
}

// New opens a pool on the workspace directory with the record st (the zero
// State for a new agent, the checkpointed one on resume). It reads no
// tracked file; call Reconcile for that.
//
// # Errors
//
// The workspace cannot be opened, or st has an invalid entry (a path
// CleanPath refuses, the same path twice, an unknown op).
func New(workspace string, st State, cfg Config) (*Pool, error) {
	if cfg.MaxEntries < 0 {
		return nil, fmt.Errorf("open file pool on %s: negative MaxEntries %d", workspace, cfg.MaxEntries)
	}
	p := &Pool{max: cmp.Or(cfg.MaxEntries, DefaultMaxEntries),
		entries: make(map[string]Entry, len(st.Entries)), watchers: map[*Watcher]struct{}{}}
	for _, e := range st.Entries {
		e, err := e.check()
		if err != nil {
			return nil, fmt.Errorf("file pool state: %w", err)
		}
		if _, dup := p.entries[e.Path]; dup {
			return nil, fmt.Errorf("file pool state: %s appears twice", e.Path)
		}
		p.entries[e.Path] = e
	}
	p.evict("")
	dir, err := filepath.Abs(workspace)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("open file pool on %s: %w", workspace, err)
	}
	if p.root, err = os.OpenRoot(dir); err != nil {
		return nil, fmt.Errorf("open file pool on %s: %w", workspace, err)
	}
	p.dir = dir
	return p, nil
}

// Close stops the pool's watchers and releases the workspace. The record
// stays readable through State and Lookup.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	ws := p.watcherList()
	p.mu.Unlock()
	for _, w := range ws {
		w.Close()
	}
	p.open.Lock()
	defer p.open.Unlock()
	return p.root.Close()
}

// acquire keeps the workspace open until release; it fails once the pool
// is closed.
func (p *Pool) acquire() error {
	p.open.RLock()
	if p.isClosed() {
		p.open.RUnlock()
		return ErrClosed
	}
	return nil
}

func (p *Pool) release() { p.open.RUnlock() }

// look reads what the workspace holds at name (see the function look).
func (p *Pool) look(ctx context.Context, name string) (Version, string, error) {
	if err := p.acquire(); err != nil {
		return Version{}, "", err
	}
	defer p.release()
	return look(ctx, p.root, name)
}

// Saw hashes path in the workspace now and records it as seen by call in
// round with op: OpRead after a tool read it, OpWrite or OpDelete after a
// call's effect was applied. It returns the recorded entry. The hash is of
// the file as it is when Saw runs; a caller that knows what the tool
// actually saw should use Record.
//
// # Errors
//
// ErrBadPath; ErrUnreadable if path holds a directory, a symlink leading
// outside the workspace or anything else a tool could not read; an entry
// error if op contradicts the file (OpWrite and no file); ErrClosed; ctx's
// error.
func (p *Pool) Saw(ctx context.Context, path string, round int, call string, op Op) (Entry, error) {
	name, err := CleanPath(path)
	if err != nil {
		return Entry{}, err
	}
	v, bad, err := p.look(ctx, name)
	if err != nil {
		return Entry{}, err
	}
	if bad != "" {
		return Entry{}, fmt.Errorf("%s: %w: %s", name, ErrUnreadable, bad)
	}
	return p.Record(Entry{Path: name, Exists: v.Exists, Hash: v.Hash, Size: v.Size,
		Round: round, Call: call, Op: op})
}

// Record records e, whose content the caller already knows: the base a
// tool read, or the new content of an effect (see HashReader). Recording
// an effect before the next Drain is what keeps the agent's own writes from
// being reported as outside changes. It returns the entry as stored (path
// cleaned, hash zeroed for an absent file).
//
// # Errors
//
// ErrBadPath; an unknown op; OpWrite without a file or OpDelete with one;
// ErrClosed.
func (p *Pool) Record(e Entry) (Entry, error) {
	e.Outside = false
	e, err := e.check()
	if err != nil {
		return Entry{}, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return Entry{}, ErrClosed
	}
	_, known := p.entries[e.Path]
	p.entries[e.Path] = e
	p.evict(e.Path)
	ws := p.watcherList()
	p.mu.Unlock()
	if !known {
		for _, w := range ws {
			w.track(e.Path)
		}
	}
	return e, nil
}

// Lookup returns the entry of path, if it is tracked.
func (p *Pool) Lookup(path string) (Entry, bool) {
	name, err := CleanPath(path)
	if err != nil {
		return Entry{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.entries[name]
	return e, ok
}

// Len is the number of tracked paths.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// State returns a copy of the record, sorted by path: the value to
// checkpoint.
func (p *Pool) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return State{Entries: p.sorted()}
}

// sorted returns the entries sorted by path. The caller holds p.mu.
func (p *Pool) sorted() []Entry {
	if len(p.entries) == 0 {
		return nil
	}
	es := make([]Entry, 0, len(p.entries))
	for _, e := range p.entries {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Compare(a.Path, b.Path) })
	return es
}

// sortedOf returns the entries of the paths of names that the pool
// tracks, sorted by path. The caller holds p.mu.
func (p *Pool) sortedOf(names map[string]struct{}) []Entry {
	es := make([]Entry, 0, len(names))
	for name := range names {
		if e, ok := p.entries[name]; ok {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Compare(a.Path, b.Path) })
	return es
}

// evict forgets entries past the bound, oldest round first (by path among
// equals), never keep. The caller holds p.mu.
func (p *Pool) evict(keep string) {
	for len(p.entries) > p.max {
		var victim *Entry
		for _, e := range p.entries {
			if e.Path == keep {
				continue
			}
			if victim == nil || e.Round < victim.Round || e.Round == victim.Round && e.Path < victim.Path {
				victim = &e
			}
		}
		delete(p.entries, victim.Path)
	}
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// watcherList is the pool's watchers. The caller holds p.mu.
func (p *Pool) watcherList() []*Watcher {
	ws := make([]*Watcher, 0, len(p.watchers))
	for w := range p.watchers {
		ws = append(ws, w)
	}
	return ws
}
