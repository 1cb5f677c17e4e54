package guestfs

import (
	"context"
	"path"
	"strings"
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Anchor is a directory a guest opened (path_open) and holds a descriptor
// of. wazero names such a descriptor by the path it was opened by, and
// hands a filesystem each path relative to it joined under that name: so
// the directory would be found by its name, where Linux's descriptor
// keeps to the directory, renamed or not. A filesystem therefore resolves
// the name to where the directory now is (At): it follows every rename the
// guest makes of it, or of a directory above it, and a directory removed,
// or replaced by a rename onto it, is gone (ENOENT, as Linux answers a
// lookup in a removed directory). A plain mount also checks that the
// directory is still at At when it is used, so one moved by anyone else
// (in the workspace, or out of it) is gone too: a descriptor never
// reaches a directory outside its mount, and what it reaches it reaches
// by a path within the mount, which os.Root confines as any other.
type Anchor struct {
	owner any    // the filesystem it is of
	name  string // wazero's name of it: the path its filesystem was asked to open
	at    string // where it is now, relative to the mount
	gone  bool
	// Dev and Ino identify the directory, for a filesystem that checks
	// that At is still it; zero for one that does not.
	Dev, Ino uint64
}

// At is where the directory is now, relative to its mount, and whether it
// is still there. It is read in the function that acts, which alone
// changes it (see Dirs).
func (a *Anchor) At() (string, bool) { return a.at, !a.gone }

// Dirs is the directories a call's guest holds open (Anchor), carried by
// the call's context from its filesystems, which open, rename and remove
// them, to its WASI functions, which say which descriptor each path of a
// call is relative to. A WASI preview 1 guest has one thread, in the one
// function that acts; but wazero may close the guest's files from another
// goroutine once the call must stop, so a Dirs is safe for concurrent use.
type Dirs struct {
	mu     sync.Mutex
	live   map[*Anchor]struct{} // made at the first Open
	opened *Anchor              // the directory the last open opened, if it was one
	args   [2]*Anchor           // the directories of the paths of the function called, by the order of its paths
}

// DirsOf is the Dirs ctx carries (see WithCall), or nil.
func DirsOf(ctx context.Context) *Dirs {
	if c := callOf(ctx); c != nil {
		return &c.dirs
	}
	return nil
}

// Open records a directory owner opened: name is the path it was asked to
// open, at where that led in the mount. The WASI function that opened it
// takes it (Opened), for the descriptor it gives it.
func (d *Dirs) Open(owner any, name, at string) *Anchor {
	if d == nil {
		return nil
	}
	a := &Anchor{owner: owner, name: name, at: canon(at)}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.live == nil {
		d.live = map[*Anchor]struct{}{}
	}
	d.live[a], d.opened = struct{}{}, a
	return a
}

// Close forgets a, whose directory was closed.
func (d *Dirs) Close(a *Anchor) {
	if d != nil && a != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		delete(d.live, a)
	}
}

// Opened is the directory the last open opened, if it was one, and
// forgets it: call it before an open, and after it for what it opened.
func (d *Dirs) Opened() *Anchor {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.opened
	d.opened = nil
	return a
}

// Using says which directory each path of the function about to be
// called is relative to (nil for a preopen, or a descriptor no Anchor
// is of); Using with none clears them.
func (d *Dirs) Using(args ...*Anchor) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.args = [2]*Anchor{}
	copy(d.args[:], args)
}

// Resolve is path, the i-th path a function of owner's was handed, with
// the name of the directory it is relative to replaced by where that
// directory is now: ENOENT when it is gone. A path relative to no Anchor
// is as it is.
func (d *Dirs) Resolve(owner any, i int, path string) (*Anchor, string, experimentalsys.Errno) {
	if d == nil {
		return nil, path, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if i >= len(d.args) || d.args[i] == nil || d.args[i].owner != owner {
		return nil, path, 0
	}
	a := d.args[i]
	rest, ok := strings.CutPrefix(path, a.name)
	if !ok || (rest != "" && rest[0] != '/') {
		return nil, path, 0
	}
	if a.gone {
		return a, "", experimentalsys.ENOENT
	}
	return a, a.at + rest, 0
}

// Renamed follows a rename owner made of from to to (both relative to
// the mount, cleaned): a directory at to before it is gone, and one at
// from or under it is now at to or under it.
func (d *Dirs) Renamed(owner any, from, to string) {
	if d == nil {
		return
	}
	from, to = canon(from), canon(to)
	d.mu.Lock()
	defer d.mu.Unlock()
	for a := range d.live {
		if a.owner == owner && a.at == to {
			a.gone = true
		}
	}
	for a := range d.live {
		if a.owner != owner || a.gone {
			continue
		}
		if rest, ok := strings.CutPrefix(a.at, from); ok && (rest == "" || rest[0] == '/') {
			a.at = to + rest
		}
	}
}

// Removed marks the directory owner removed at path gone.
func (d *Dirs) Removed(owner any, path string) {
	if d == nil {
		return
	}
	path = canon(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	for a := range d.live {
		if a.owner == owner && a.at == path {
			a.gone = true
		}
	}
}

// canon is p relative to the mount, cleaned: the form At has.
func canon(p string) string { return path.Clean(rel(p)) }
