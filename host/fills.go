package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/lockfile"
	"github.com/cairnrun/cairn/internal/syncpoint"
	"golang.org/x/sys/unix"
)

// fillPrefix begins the name of the directory a fill fills beside the
// workspace it fills (fillBeside).
const fillPrefix = ".cairn-fill-"

// fillBeside fills dir, an empty directory, with fill through a directory
// beside it named after agent, renamed over dir once whole, so that a fill
// killed part way (SIGKILL, a power cut) leaves dir empty, and the next
// fill of dir for the agent goes on: it first removes what the killed one
// left beside dir. Where the fill fails, nothing is left beside dir.
//
// Before it begins, the fill marks in the store (checkpoint.FillMarks)
// the directory it fills beside dir, durably, and removes the mark once
// that directory is renamed into place or removed; it holds a flock of
// that directory until then. What a killed fill left beside any
// directory, for any agent, is held by no process, and is removed by the
// next fill into the same parent directory (sweepFills), and, wherever it
// is, by the next fill from the same store and by `cairn gc`, which find
// it by its mark (sweepMarked).
//
// # Errors
//
// ErrWorkspaceNotEmpty when another process filled dir meanwhile (another
// fork into it): dir is that one's, and the caller leaves it as it is.
func fillBeside(s checkpoint.Store, dir, agent string, fill func(dir string) error) (err error) {
	parent := filepath.Dir(dir)
	filling := filepath.Join(parent, fillPrefix+agent+"-"+filepath.Base(dir))
	sweepMarked(s, false, map[string]bool{})
	sweepFills(parent, filling, false)
	if err := os.RemoveAll(filling); err != nil {
		return err
	}
	release, err := markFill(s, filling)
	if err != nil {
		return err
	}
	defer func() {
		left := err != nil && os.RemoveAll(filling) != nil
		release(left)
	}()
	held, err := holdFill(filling)
	if err != nil {
		return err
	}
	defer held.Close() // after the rename: the flock is let go once the fill is in place
	if err := fill(filling); err != nil {
		return err
	}
	// A directory is renamed over an empty one (rename(2); os.Rename
	// refuses any directory); one the person made keeps its mode.
	if fi, err := os.Stat(dir); err == nil {
		if err := os.Chmod(filling, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	if err := syscall.Rename(filling, dir); errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return fmt.Errorf("workspace %s %w: another process filled it meanwhile", dir, ErrWorkspaceNotEmpty)
	} else if err != nil {
		return &os.LinkError{Op: "rename", Old: filling, New: dir, Err: err}
	}
	return syncpoint.SyncFile(parent)
}

// markFill marks the fill of the directory filling in a store that keeps
// marks, and returns what lets go of the mark: it removes it, unless left
// says that the fill left something there for a sweep to remove.
func markFill(s checkpoint.Store, filling string) (release func(left bool), err error) {
	m, ok := s.(checkpoint.FillMarks)
	if !ok {
		return func(bool) {}, nil
	}
	done, err := m.MarkFill(filling)
	if err != nil {
		return nil, fmt.Errorf("mark the fill of %s in the store, before it begins: %w", filling, err)
	}
	return func(left bool) { done(left) }, nil
}

// sweepMarked removes, in the parent directory of each fill the store's
// marks name that no process holds (checkpoint.FillMarks), what fills
// killed part way left there (sweepFills), and returns what it removed; a
// dry run removes nothing and returns what it would remove. swept are
// the parent directories swept already, and gain those it sweeps. A mark
// is dropped once what it names is gone, or is another live fill's. A
// mark a fork left naming the new agent's workspace (Fork) is kept while
// the workspace holds the fork's mark, and returned in unmade (once: a
// second mark of the same workspace, which a fork run again and refused
// leaves, is dropped).
func sweepMarked(s checkpoint.Store, dryRun bool, swept map[string]bool) (removed []string, unmade []checkpoint.UnmadeFork) {
	m, ok := s.(checkpoint.FillMarks)
	if !ok {
		return nil, nil
	}
	named := map[string]bool{}
	m.LeftFills(func(dir string) error {
		if !strings.HasPrefix(filepath.Base(dir), fillPrefix) {
			f, ok := readForkMark(dir)
			if !ok || named[dir] {
				return nil // made, taken back, or named by another mark kept
			}
			named[dir] = true
			unmade = append(unmade, checkpoint.UnmadeFork{Dir: dir, Agent: f.Agent, From: f.From, Round: f.Round, Label: f.Label, Past: f.Past})
			return fmt.Errorf("%s is left unmade", dir)
		}
		if parent := filepath.Dir(dir); !swept[parent] {
			swept[parent] = true
			removed = append(removed, sweepFills(parent, "", dryRun)...)
		}
		if dryRun || fillGone(dir) {
			return nil
		}
		return fmt.Errorf("%s is left", dir)
	}, dryRun)
	return removed, unmade
}

// fillGone reports whether the fill directory filling is gone, or held by
// a live fill (one with a mark of its own).
func fillGone(filling string) bool {
	f, err := os.Open(filling)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil
}

// holdFill makes the empty directory filling and takes its flock, which
// tells a sweep (sweepFills) that a live process fills it. A sweep that
// took the flock of a directory of that name first, one a killed fill
// left, moves it away: the directory is made again.
func holdFill(filling string) (*os.File, error) {
	deadline := time.Now().Add(flockPatience)
	for {
		if err := os.Mkdir(filling, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		f, err := os.Open(filling)
		if err == nil {
			if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil && lockfile.Names(filling, f) {
				return f, nil
			}
			f.Close()
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && err != unix.EWOULDBLOCK && err != unix.EINTR {
			return nil, fmt.Errorf("hold %s: %w", filling, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("hold %s: another process kept it for %s", filling, flockPatience)
		}
		time.Sleep(time.Millisecond)
	}
}

// sweepFills removes from parent what fills killed part way left there
// (fillBeside), of any agent and any workspace, but own, the fill's own
// directory, which its caller removes itself: each directory named as a
// fill's whose flock no process holds. It is moved aside first, under a
// fill's name still, so that a kill during the removal leaves no part of
// it under a name a fill takes for its own, and the next sweep removes
// the rest. It returns the directories it removed (in a dry run, those it
// would remove, removing none). Nothing is said of what cannot be
// removed: it is tried again by the next sweep.
func sweepFills(parent, own string, dryRun bool) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := filepath.Join(parent, e.Name())
		if !e.IsDir() || !strings.HasPrefix(e.Name(), fillPrefix) || name == own {
			continue
		}
		if sweepFill(name, dryRun) {
			removed = append(removed, name)
		}
	}
	return removed
}

// sweepFill removes the fill's directory name unless a process holds it,
// and reports whether it did (in a dry run, whether it would).
func sweepFill(name string, dryRun bool) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil || !lockfile.Names(name, f) {
		return false // a live fill's, or renamed into place meanwhile
	}
	if dryRun {
		return true
	}
	aside := filepath.Join(filepath.Dir(name), fillPrefix+"gone-"+newID())
	return os.Rename(name, aside) == nil && os.RemoveAll(aside) == nil
}
