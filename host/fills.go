package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
// beside it, named after agent and dir and made unique, renamed over dir
// once whole, so that a fill killed part way (SIGKILL, a power cut)
// leaves dir empty, and the next fill of dir goes on.
//
// Before it begins, the fill marks (fillMarksOf) the directory it fills
// beside dir, durably, and removes the mark once that directory is
// renamed into place or removed; it holds a flock of that directory until
// then. What a killed fill left is held by no process, and is removed,
// wherever it is, by the next fill marked in the same place and by `cairn
// gc`, which find it by its mark (sweepMarked). A fill directory no mark
// of the store names (another store's, or one a fill of an older cairn
// left) is not this store's to remove, and is left as it is.
//
// # Errors
//
// ErrWorkspaceNotEmpty when another process filled dir meanwhile (another
// fork into it): dir is that one's, and the caller leaves it as it is.
func fillBeside(s checkpoint.Store, dir, agent string, fill func(dir string) error) (err error) {
	parent := filepath.Dir(dir)
	filling := filepath.Join(parent, fillPrefix+agent+"-"+filepath.Base(dir)+"-"+newID())
	sweepMarked(s, false)
	release, err := markFill(s, checkpoint.FillMark{Dir: filling})
	if err != nil {
		return err
	}
	defer func() {
		left := err != nil && os.RemoveAll(filling) != nil
		release(left)
	}()
	held, err := holdFill(filling)
	if err != nil {
		return withFillAdvice(err, dir)
	}
	defer held.Close() // after the rename: the flock is let go once the fill is in place
	if err := fill(filling); err != nil {
		return withFillAdvice(err, dir)
	}
	// A directory is renamed over an empty one (rename(2); os.Rename
	// refuses any directory); one the person made keeps its mode.
	if fi, err := os.Stat(dir); err == nil {
		if err := os.Chmod(filling, fi.Mode().Perm()); err != nil {
			return withFillAdvice(err, dir)
		}
	}
	if err := syscall.Rename(filling, dir); errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return fmt.Errorf("workspace %s %w: another process filled it meanwhile", dir, ErrWorkspaceNotEmpty)
	} else if err != nil {
		return withFillAdvice(&os.LinkError{Op: "rename", Old: filling, New: dir, Err: err}, dir)
	}
	return syncpoint.SyncFile(parent)
}

// fillMarksOf is where the fills of store are marked: in the store, when
// it keeps marks (a file store's fills/), else on this machine, in the
// store's own directory of fillMarksDir, when it names itself the same
// for every process (a PostgreSQL store's): a mark names a directory of
// the machine that fills it, and only a process on that machine can tell,
// by its flock, whether the fill is alive, or remove what it left. Nil for
// a store known only in this process (in memory), whose fills no later
// process could find.
func fillMarksOf(store checkpoint.Store) (checkpoint.FillMarks, error) {
	if m, ok := store.(checkpoint.FillMarks); ok {
		return m, nil
	}
	if _, named := store.(interface{ Identity() string }); !named {
		return nil, nil
	}
	dir, err := fillMarksDir(store)
	if err != nil {
		return nil, err
	}
	return checkpoint.NewMarkDir(dir), nil
}

// fillMarksDir is this machine's directory of the marks of fills of
// store, one that keeps none itself: in this user's state directory
// ($XDG_STATE_HOME/cairn, or ~/.local/state/cairn), under fills/, named
// by storeDigest. Not in the temp directory, beside the store's staging:
// a mark is all that finds what a killed fill left, for good, and a
// reboot (a tmpfs) or a cleaning of the temp directory would lose it.
func fillMarksDir(store checkpoint.Store) (string, error) {
	state, err := stateDir()
	if err != nil {
		return "", fmt.Errorf("no directory to keep this machine's marks of fills in, which must outlast a reboot: " +
			"set XDG_STATE_HOME, or HOME, to a directory of your own")
	}
	return filepath.Join(state, "fills", storeDigest(store)), nil
}

// stateDir is this user's directory of cairn's state on this machine,
// which outlasts a reboot and a cleaning of the temp directory:
// $XDG_STATE_HOME/cairn, or ~/.local/state/cairn. An error when neither
// XDG_STATE_HOME nor HOME names an absolute directory.
func stateDir() (string, error) {
	state := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return "", errors.New("neither XDG_STATE_HOME nor HOME names a directory")
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "cairn"), nil
}

// olderFillMarksOf are the marks of fills of store that an older cairn
// kept on this machine, which no fill makes now but a sweep reads: those
// of a store that keeps none, in its directory of the temp directory
// (localRootOf), where a reboot has not emptied it, and while it is this
// user's alone (checkStagingOf).
func olderFillMarksOf(store checkpoint.Store) []checkpoint.FillMarks {
	if _, ok := store.(checkpoint.FillMarks); ok {
		return nil
	}
	if _, named := store.(interface{ Identity() string }); !named {
		return nil
	}
	dir := filepath.Join(localRootOf(store), "fills")
	if _, err := os.Lstat(dir); err != nil || checkStagingOf(store) != nil {
		return nil
	}
	return []checkpoint.FillMarks{checkpoint.NewMarkDir(dir)}
}

// markFill marks the fill m in store's marks (fillMarksOf), and returns
// what lets go of the mark: it removes it, unless left says that the fill
// left something there for a sweep to remove.
func markFill(s checkpoint.Store, m checkpoint.FillMark) (release func(left bool), err error) {
	marks, err := fillMarksOf(s)
	if err != nil {
		return nil, fmt.Errorf("mark the fill of %s, before it begins: %w", m.Dir, err)
	}
	if marks == nil {
		return func(bool) {}, nil
	}
	done, err := marks.MarkFill(m) // its error names the fill
	if err != nil {
		return nil, err
	}
	return func(left bool) { done(left) }, nil
}

// sweepMarked removes what fills killed part way left, as the store's
// marks that no process holds name them (fillMarksOf): a fill's directory
// (sweepFill), and the empty directories a fork or resume made for its
// workspace before it filled it (sweepMade). It returns what it removed
// of each; a dry run removes nothing and returns what it would remove. A
// mark is dropped once what it names is gone, or is another live fill's,
// or is in place as its agent's workspace. A mark a fork
// left naming the new agent's workspace (Fork) is kept while the
// workspace holds the fork's mark, and returned in unmade (once: a second
// mark of the same workspace, which a fork run again and refused leaves,
// is dropped). What it found to remove and could not (a read-only file
// system, say) it returns in unremoved, with why, and keeps its mark for
// the next sweep.
func sweepMarked(s checkpoint.Store, dryRun bool) (removed, made []string, unmade []checkpoint.UnmadeFork, unremoved []checkpoint.Unremoved) {
	marks, err := fillMarksOf(s)
	all := olderFillMarksOf(s)
	if err == nil && marks != nil {
		all = append([]checkpoint.FillMarks{marks}, all...)
	}
	if len(all) == 0 {
		return nil, nil, nil, nil
	}
	failed := func(dir string, err error) {
		if !slices.ContainsFunc(unremoved, func(u checkpoint.Unremoved) bool { return u.Dir == dir }) {
			unremoved = append(unremoved, checkpoint.Unremoved{Dir: dir, Reason: err.Error()})
		}
	}
	leftFills := func(sweep func(m checkpoint.FillMark) error) {
		for _, m := range all {
			m.LeftFills(sweep, dryRun)
		}
	}
	fill := func(dir string) error {
		if ok, err := sweepFill(dir, dryRun); ok {
			removed = append(removed, dir)
		} else if err != nil {
			failed(dir, err)
		}
		if dryRun || fillGone(dir) {
			return nil
		}
		return fmt.Errorf("%s is left", dir)
	}
	// Fill directories first: one may be all that keeps a directory a
	// fork made from being empty.
	leftFills(func(m checkpoint.FillMark) error {
		if !strings.HasPrefix(filepath.Base(m.Dir), fillPrefix) {
			return fmt.Errorf("%s is a workspace", m.Dir) // kept for the pass below
		}
		return fill(m.Dir)
	})
	named, gone := map[string]bool{}, map[string]bool{}
	if dryRun {
		for _, d := range removed {
			gone[d] = true
		}
	}
	leftFills(func(m checkpoint.FillMark) error {
		dir := m.Dir
		if !strings.HasPrefix(filepath.Base(dir), fillPrefix) {
			f, ok := readForkMark(dir)
			if !ok && agentsWorkspace(s, m) {
				return nil // in place: the agent's, empty or not
			}
			if !ok {
				left, err := sweepMade(m, dryRun, gone, failed)
				made = append(made, left...)
				return err
			}
			if named[dir] {
				return nil // named by another mark kept
			}
			named[dir] = true
			unmade = append(unmade, checkpoint.UnmadeFork{Dir: dir, Agent: f.Agent, From: f.From, Round: f.Round, Label: f.Label, Past: f.Past})
			return fmt.Errorf("%s is left unmade", dir)
		}
		if dryRun && slices.Contains(removed, dir) {
			return nil // named above
		}
		return fill(dir)
	})
	return removed, made, unmade, unremoved
}

// agentsWorkspace says whether the directory m marks is the workspace of
// the agent m names, as the store has it: the fork or resume that marked
// it was killed once it was in place, and it is the agent's, though it be
// empty (an agent with no files).
func agentsWorkspace(s checkpoint.Store, m checkpoint.FillMark) bool {
	if m.Agent == "" {
		return false
	}
	rec, err := s.Read(m.Agent)
	return err == nil && rec.State.Definition.Workspace == m.Dir
}

// sweepMade removes the directories m says a fork or resume --workspace
// made for its workspace (m.Makes), innermost first, each while it is
// empty and no live fork or resume holds it (holdWorkspace), and returns
// those it removed (in a dry run, those it would remove). A directory
// that holds anything stops it: it is someone's; in a dry run, one that holds only what is in gone, which
// the dry run would remove, is taken for empty, and what it would remove
// is added to gone. Its error keeps the mark: a live fork holds the
// workspace, which may be left empty still once it is gone, or one could
// not be removed, which it tells failed.
func sweepMade(m checkpoint.FillMark, dryRun bool, gone map[string]bool, failed func(dir string, err error)) ([]string, error) {
	var removed []string
	for i := len(m.Makes) - 1; i >= 0; i-- {
		dir := m.Makes[i]
		f, err := os.Open(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, nil
		}
		entries, _ := f.ReadDir(-1)
		empty := !slices.ContainsFunc(entries, func(e os.DirEntry) bool { return !gone[filepath.Join(dir, e.Name())] })
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			return removed, fmt.Errorf("%s is held", dir)
		}
		if !empty || !lockfile.Names(dir, f) {
			f.Close()
			return removed, nil
		}
		if dryRun {
			_, err = removable(dir)
		} else if rerr := unix.Rmdir(dir); rerr != nil {
			err = &os.PathError{Op: "remove", Path: dir, Err: rerr}
		}
		if err != nil {
			f.Close()
			failed(dir, err)
			return removed, fmt.Errorf("%s is left", dir)
		}
		f.Close()
		removed = append(removed, dir)
		if dryRun {
			gone[dir] = true
		}
	}
	return removed, nil
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
// tells a sweep (sweepFill) that a live process fills it. A directory of
// that name removed between its making and the flock is made again.
func holdFill(filling string) (*os.File, error) {
	mkdir := func(d string) error { return os.Mkdir(d, 0o755) }
	return holdDir(filling, mkdir, unix.LOCK_EX)
}

// holdDir makes dir (with mkdir, which may find it there) and takes a
// flock of it of kind how, trying again for flockPatience while another
// process holds it or it is removed between its making and the flock.
func holdDir(dir string, mkdir func(string) error, how int) (*os.File, error) {
	deadline := time.Now().Add(flockPatience)
	for {
		if err := mkdir(dir); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		f, err := os.Open(dir)
		if err == nil {
			if err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err == nil && lockfile.Names(dir, f) {
				return f, nil
			}
			f.Close()
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && err != unix.EWOULDBLOCK && err != unix.EINTR {
			return nil, fmt.Errorf("hold %s: %w", dir, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("hold %s: another process kept it for %s", dir, flockPatience)
		}
		time.Sleep(time.Millisecond)
	}
}

// toMake are the directories that making dir makes, outermost first:
// dir and those above it that are not there.
func toMake(dir string) []string {
	var makes []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		makes = append([]string{p}, makes...)
	}
	return makes
}

// holdWorkspace takes a shared flock of dir, the workspace a fork or
// resume --workspace made empty (makeEmptyDir), which tells a sweep of
// what a killed one made and left empty (sweepMade) that a live one fills
// it; shared, since two forks into one directory each go on until one
// fills it first. A sweep that took it first and removed it has it made
// again.
func holdWorkspace(dir string) (*os.File, error) {
	mkdirAll := func(d string) error { return os.MkdirAll(d, 0o755) }
	return holdDir(dir, mkdirAll, unix.LOCK_SH)
}

// sweepFill removes the fill's directory name, which a mark no process
// holds names, unless a process holds it, and reports whether it did (in
// a dry run, whether it would), or why it could not. A kill during the
// removal leaves the rest under the same name, and the mark, and the next
// sweep removes it.
func sweepFill(name string, dryRun bool) (bool, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil || !lockfile.Names(name, f) {
		return false, nil // a live fill's, or renamed into place meanwhile
	}
	if dryRun {
		return removable(name)
	}
	if err := os.RemoveAll(name); err != nil {
		return false, err
	}
	return true, nil
}

// removable says, for a dry run, whether the directory dir can be removed
// from its parent, or why not: a parent cairn may not write, or on a
// file system mounted read-only.
func removable(dir string) (bool, error) {
	if err := unix.Access(filepath.Dir(dir), unix.W_OK); err != nil {
		return false, &os.PathError{Op: "remove", Path: dir, Err: err}
	}
	return true, nil
}

// olderFillPrefixes begin the names an older cairn gave the directory it
// filled beside an agent's workspace, AGENT-NAME after them (the agent and
// the workspace's name), and marked nowhere: .cairn-fork- (a fork's),
// then .cairn-fill- (a fork's or a resume --workspace's). A killed one's
// was swept by that cairn's gc beside each agent's workspace.
var olderFillPrefixes = []string{".cairn-fork-", fillPrefix}

// sweepOlderFills removes what a fill of an older cairn killed part way
// left beside the workspace of an agent of s, where its name proves it
// cairn's: of that agent and that workspace (olderFillPrefixes), in the
// workspace's directory, and held by no process, the agent's lock taken
// (no fill of its workspace under way); a dry run asks whether a process
// holds it (lockHeld) rather than take it. It returns what it removed (in a
// dry run, what it would remove), leaving out what is in done, swept
// already, and what it could not remove, with why. A name of another
// agent, or of no agent's workspace, may be a person's, and is left.
func sweepOlderFills(s checkpoint.Store, dryRun bool, done []string) (removed []string, unremoved []checkpoint.Unremoved) {
	agents, err := s.List()
	if err != nil {
		return nil, nil
	}
	for _, a := range agents {
		if a.Locked || a.Err != nil {
			continue
		}
		rec, err := s.Read(a.ID)
		if err != nil || rec.State == nil || !filepath.IsAbs(rec.State.Definition.Workspace) {
			continue
		}
		ws := rec.State.Definition.Workspace
		var left []string
		for _, prefix := range olderFillPrefixes {
			name := filepath.Join(filepath.Dir(ws), prefix+a.ID+"-"+filepath.Base(ws))
			if fi, err := os.Lstat(name); err == nil && fi.IsDir() && !slices.Contains(done, name) {
				left = append(left, name)
			}
		}
		if len(left) == 0 {
			continue
		}
		unlock := func() error { return nil }
		if dryRun {
			// Asked, not taken: a dry run leaves the lock as it is.
			if held, err := lockHeld(s, a.ID); err != nil || held {
				continue // a process runs it, or fills its workspace
			}
		} else {
			lock, err := s.Lock(a.ID, checkpoint.ThisProcess("gc"))
			if err != nil {
				continue // a process runs it, or fills its workspace
			}
			unlock = lock.Unlock
		}
		for _, name := range left {
			if ok, err := sweepFill(name, dryRun); ok {
				removed = append(removed, name)
			} else if err != nil {
				unremoved = append(unremoved, checkpoint.Unremoved{Dir: name, Reason: err.Error()})
			}
		}
		unlock()
	}
	return removed, unremoved
}

// fillAdvice is what to do about err, a failed write of a fork or resume
// --workspace in or beside the directory dir it fills, of which nothing is
// kept: "" where it says nothing to do.
func fillAdvice(err error, dir string) string {
	const again = ", and run it again: nothing of the fill was kept"
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk of " + dir + " is full: free space on it (or raise the quota), or give a directory on another disk" + again
	case errors.Is(err, syscall.EROFS):
		return "the file system of " + dir + " is read-only: mount it read-write, or give a directory on another" + again
	case errors.Is(err, fs.ErrPermission):
		return "cairn may not write in " + filepath.Dir(dir) + ": give a directory it may write in" + again
	}
	return ""
}

// withFillAdvice is err with fillAdvice's, if any.
func withFillAdvice(err error, dir string) error {
	if advice := fillAdvice(err, dir); advice != "" {
		return fmt.Errorf("%w; %s", err, advice)
	}
	return err
}
