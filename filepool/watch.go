package filepool

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Watcher collects the tracked paths that had file-system events, for the
// caller to Drain at the start of each round. Many events on one path are
// one entry in its set until the next Drain. It is safe for concurrent use.
//
// It watches the directory of each tracked file, not the file: editors and
// atomic writers replace a file by renaming another over it, which ends a
// watch on the file itself. A directory that does not exist yet is covered
// by its nearest existing ancestor; one that is a symlink leading outside
// the workspace is not watched.
type Watcher struct {
	pool *Pool
	fw   *fsnotify.Watcher
	quit chan struct{}
	done chan struct{} // closed when the event loop has ended
	stop sync.Once

	// adding serialises changes to the set of watched directories.
	adding sync.Mutex

	mu      sync.Mutex
	dirty   map[string]struct{}
	all     bool // events were lost: the next Drain re-hashes every path
	resync  bool // a directory of tracked paths came or went
	stopped bool
}

// Watch starts watching the directories of the tracked files; paths
// tracked later are watched as they are recorded. The watcher stops when
// ctx is done or Close is called; the pool's Close stops it too.
//
// # Errors
//
// ErrClosed; the system refuses a watcher (on Linux, the inotify instance
// limit fs.inotify.max_user_instances).
func (p *Pool) Watch(ctx context.Context) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch workspace %s: %w", p.dir, err)
	}
	w := &Watcher{pool: p, fw: fw, quit: make(chan struct{}), done: make(chan struct{}),
		dirty: map[string]struct{}{}}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		fw.Close()
		return nil, ErrClosed
	}
	p.watchers[w] = struct{}{}
	p.mu.Unlock()
	w.sync()
	go w.loop(ctx)
	return w, nil
}

// Close stops the watcher. Drain still works after it, by re-hashing every
// tracked path.
func (w *Watcher) Close() error {
	w.stop.Do(func() { close(w.quit) })
	<-w.done
	return nil
}

func (w *Watcher) loop(ctx context.Context) {
	defer close(w.done)
	defer w.finish()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.quit:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.event(ev)
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// Overflow or a failed read: events were lost, and only a full
			// re-hash knows what they were.
			w.mu.Lock()
			w.all, w.resync = true, true
			w.mu.Unlock()
		}
	}
}

// finish ends watching; a Drain from now on re-hashes everything.
func (w *Watcher) finish() {
	w.fw.Close()
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.pool.mu.Lock()
	delete(w.pool.watchers, w)
	w.pool.mu.Unlock()
}

// event marks the tracked paths an event may have changed: the path
// itself, and, when a directory is created, removed or renamed, every
// tracked path beneath it.
func (w *Watcher) event(ev fsnotify.Event) {
	rel, err := filepath.Rel(w.pool.dir, ev.Name)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	structural := ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	var hit []string
	dirLevel := false
	p := w.pool
	p.mu.Lock()
	if _, ok := p.entries[rel]; ok {
		hit = append(hit, rel)
	} else if structural {
		dirLevel = true
		prefix := rel + "/"
		if rel == "." {
			prefix = ""
		}
		for name := range p.entries {
			if strings.HasPrefix(name, prefix) {
				hit = append(hit, name)
			}
		}
	}
	p.mu.Unlock()
	if len(hit) == 0 {
		return
	}
	w.mu.Lock()
	for _, name := range hit {
		w.dirty[name] = struct{}{}
	}
	w.resync = w.resync || dirLevel
	w.mu.Unlock()
}

// Drain returns the tracked paths that changed outside the agent since the
// last Drain, sorted by path, and accepts them into the record (see
// Accept), so each change is reported once. It re-hashes only the paths
// that had events or were newly tracked since, or every tracked path if
// events were lost or the watcher has stopped. A path whose record already holds what the
// workspace holds, such as a file the agent wrote and recorded, is not
// reported.
//
// # Errors
//
// ErrClosed, or ctx's error; the paths not re-hashed stay marked for the
// next Drain.
func (w *Watcher) Drain(ctx context.Context) ([]Change, error) {
	// The marks and the need for new watches are taken together, and the
	// watches added before the marked paths are re-hashed: a change
	// before a new directory's watch is seen by the re-hash, and one
	// after it by an event that marks its path for the next Drain.
	w.mu.Lock()
	resync := w.resync && !w.stopped
	dirty, all := w.dirty, w.all || w.stopped
	if len(dirty) == 0 && !all {
		w.mu.Unlock()
		return nil, nil
	}
	w.dirty, w.all, w.resync = map[string]struct{}{}, false, false
	w.mu.Unlock()
	if resync {
		w.sync()
	}
	p := w.pool
	p.mu.Lock()
	var es []Entry
	if all {
		es = p.sorted()
	} else {
		es = p.sortedOf(dirty) // what the round marked, not the whole pool
	}
	p.mu.Unlock()
	changes, err := p.rehash(ctx, es)
	if err != nil {
		w.mu.Lock()
		for name := range dirty {
			w.dirty[name] = struct{}{}
		}
		w.all = w.all || all
		w.mu.Unlock()
		return nil, err
	}
	p.Accept(changes)
	return changes, nil
}

// sync watches the directory of every tracked path and stops watching
// directories no tracked path needs any more. Watch runs it, and Drain
// when a directory of tracked paths came or went.
func (w *Watcher) sync() {
	w.adding.Lock()
	defer w.adding.Unlock()
	p := w.pool
	p.mu.Lock()
	dirs := map[string]struct{}{}
	for name := range p.entries {
		dirs[path.Dir(name)] = struct{}{}
	}
	p.mu.Unlock()
	needed := map[string]struct{}{}
	for dir := range dirs {
		if abs, ok := w.add(dir); ok {
			needed[abs] = struct{}{}
		}
	}
	for _, abs := range w.fw.WatchList() {
		if _, ok := needed[abs]; !ok {
			w.fw.Remove(abs)
		}
	}
}

// track watches the directory of a newly tracked path, and marks the
// path for the next Drain: what the caller recorded of it may already be
// out of date, changed before the watch began (a file a call read, then
// another process or agent sharing the workspace changed, before the
// call's reads were recorded), and no event would ever say so.
func (w *Watcher) track(name string) {
	w.adding.Lock()
	w.add(path.Dir(name))
	w.adding.Unlock()
	w.mu.Lock()
	w.dirty[name] = struct{}{}
	w.mu.Unlock()
}

// add watches dir, or its nearest ancestor that exists, and returns the
// absolute path it watches. A directory whose real path is outside the
// workspace is skipped for its parent. The caller holds w.adding.
func (w *Watcher) add(dir string) (string, bool) {
	for {
		abs := filepath.Join(w.pool.dir, filepath.FromSlash(dir))
		if w.inside(abs) {
			err := w.fw.Add(abs)
			if err == nil {
				return abs, true
			}
			if errors.Is(err, fsnotify.ErrClosed) {
				return "", false
			}
		}
		if dir == "." {
			return "", false
		}
		dir = path.Dir(dir)
	}
}

// inside reports whether abs, symlinks resolved, is a directory of the
// workspace.
func (w *Watcher) inside(abs string) bool {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(w.pool.dir, real)
	return err == nil && filepath.IsLocal(rel)
}
