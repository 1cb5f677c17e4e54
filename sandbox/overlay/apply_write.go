package overlay

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// Apply makes a call's effects in the workspace, reading new content from
// the call's staging directory. It is crash-safe and idempotent, so resume
// can run it again after a crash at any point:
//   - first it checks every effect (see Check) and changes nothing if any
//     conflicts: it never overwrites a path that holds neither the
//     effect's Base nor its New;
//   - an effect whose path already holds New is skipped;
//   - removals go first, deepest paths first; then directories are made,
//     parents first; then each file is written to a temporary file beside
//     it (named .cairn-apply-…, the same on every try), synced, given its
//     mode and renamed over the path;
//   - every directory an effect is in is synced before Apply returns
//     (on every try), so a nil error means the effects are durable.
//
// Apply leaves the staging directory alone; Discard it once "applied" is
// journaled. Every path resolves through os.Root: nothing outside the
// workspace is read or written. Apply checks and then acts: a change made
// by something else between the two can be overwritten.
//
// # Errors
//
// An error listing the conflicts when the workspace no longer matches the
// effects (Check finds them first), one for an invalid manifest, one
// naming the path for a staged file whose content does not match its
// effect, and filesystem errors. After an error, Apply can be run again.
func Apply(workspace, staging string, effects Effects) error {
	return apply(workspace, staging, effects, nil)
}

// errCrash is what apply returns when its crash hook stops it.
var errCrash = errors.New("stopped by the crash hook")

// apply is Apply with a hook called before each step that changes the
// workspace; when it returns true, apply stops there as if the process
// had died. Tests use it to crash Apply at every step.
func apply(workspace, staging string, effects Effects, crash func() bool) error {
	if err := effects.Validate(); err != nil {
		return err
	}
	ws, err := os.OpenRoot(workspace)
	if err != nil {
		return fmt.Errorf("apply effects: %w", err)
	}
	defer ws.Close()
	st, err := os.OpenRoot(staging)
	if err != nil {
		return fmt.Errorf("apply effects: staging: %w", err)
	}
	defer st.Close()
	states, conflicts, err := check(ws, effects)
	if err != nil {
		return fmt.Errorf("apply effects: %w", err)
	}
	if len(conflicts) > 0 {
		return &conflictError{Conflicts: conflicts}
	}
	a := &applier{ws: ws, st: st, crash: crash, dirty: map[string]bool{}}
	if err := a.run(effects, states); err != nil {
		return fmt.Errorf("apply effects: %w", err)
	}
	return nil
}

// applier applies one manifest.
type applier struct {
	ws, st *os.Root
	crash  func() bool
	dirty  map[string]bool // directories to sync
}

func (a *applier) step() error {
	if a.crash != nil && a.crash() {
		return errCrash
	}
	return nil
}

func (a *applier) run(effects Effects, states []progress) error {
	// Every directory an effect is in is synced, applied now or before: a
	// try after a crash may find renames done that were never synced.
	for _, e := range effects {
		a.dirty[path.Dir(e.Path)] = true
	}
	for i := len(effects) - 1; i >= 0; i-- {
		if e := effects[i]; states[i] == atBase && e.removes() {
			if err := a.remove(e.Path); err != nil {
				return err
			}
		}
	}
	for i, e := range effects {
		if states[i] != done && e.New.Dir {
			if err := a.mkdir(e); err != nil {
				return err
			}
		}
	}
	for i, e := range effects {
		if states[i] != done && e.New.IsFile() {
			if err := a.install(e); err != nil {
				return err
			}
		}
	}
	return a.sync()
}

func (a *applier) remove(p string) error {
	if err := a.step(); err != nil {
		return err
	}
	if err := a.ws.Remove(p); err != nil && !notExist(err) {
		return err
	}
	return nil
}

func (a *applier) mkdir(e Effect) error {
	if err := a.step(); err != nil {
		return err
	}
	if err := a.ws.Mkdir(e.Path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return a.ws.Chmod(e.Path, e.Mode)
}

// install writes e's staged content beside its path and renames it over.
func (a *applier) install(e Effect) error {
	tmp := tempName(e.Path)
	if err := a.ws.Remove(tmp); err != nil && !notExist(err) {
		return err
	}
	if err := a.writeTemp(tmp, e); err != nil {
		a.ws.Remove(tmp)
		return err
	}
	if err := a.step(); err != nil {
		return err
	}
	return a.ws.Rename(tmp, e.Path)
}

func (a *applier) writeTemp(tmp string, e Effect) error {
	src, err := a.st.Open(blobName(e.Path))
	if err != nil {
		return fmt.Errorf("staged %s: %w", e.Path, err)
	}
	defer src.Close()
	if err := a.step(); err != nil {
		return err
	}
	dst, err := a.ws.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer dst.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(h, dst), src)
	if err != nil {
		return err
	}
	if fileVersion(h.Sum(nil), n) != e.New {
		return fmt.Errorf("staged %s does not match its effect (%s)", e.Path, e.New)
	}
	if err := dst.Chmod(e.Mode); err != nil {
		return err
	}
	if err := dst.Sync(); err != nil {
		return err
	}
	syncpoint.Synced(filepath.Join(a.ws.Name(), tmp))
	return dst.Close()
}

// sync flushes every directory an effect is in, deepest first.
func (a *applier) sync() error {
	dirs := make([]string, 0, len(a.dirty))
	for d := range a.dirty {
		dirs = append(dirs, d)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if err := a.step(); err != nil {
			return err
		}
		f, err := a.ws.Open(d)
		if notExist(err) {
			continue // removed too: its parent, synced too, holds that
		}
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", d, err)
		}
		syncpoint.Synced(filepath.Join(a.ws.Name(), d))
	}
	return nil
}
