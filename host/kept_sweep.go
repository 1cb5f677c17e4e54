package host

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
)

// What a node keeps beside a store that does not keep it (a PostgreSQL
// store's; see keptDirOf and stagingRootOf) is kept in two directories
// of each agent: the temp directory's, which holds its staging and, for
// an agent an older cairn ran, its kept changes, and the state
// directory's, which holds its kept changes now. Nothing else removes
// them once the agent is gone from the store by another way than this
// node's (another node's `cairn rm`, SQL), and an older cairn's kept
// changes stay in the temp directory for as long as the state directory
// keeps none of the agent's. So gc sweeps them (sweepKept): each agent's,
// under its lock, as the store has it then.

// keptEntries are the names that make a directory of this node's, named
// as an agent, one that keeps what that agent left beside the store.
var keptEntries = []string{incarnationFile, "changes", "staging", "delegations"}

// keptSweep is what sweepKept did.
type keptSweep struct {
	kept      []checkpoint.KeptDir
	skipped   []string // agents a process holds
	unremoved []checkpoint.Unremoved
}

// sweepKept removes, for each agent this node keeps something of beside
// store, what it keeps of the agent once the store no longer has that
// agent (removed elsewhere, or made again since, its first run another:
// keptGone), and moves the kept changes an older cairn kept in the temp
// directory to the state directory (moveKept). Each is done under the
// agent's lock, and decided again once it is held: an agent a process
// holds (running, or being made) is left and named in skipped, and so is
// one that cannot be read (gc names it as unreadable). A dry run takes
// no lock and changes nothing, and says what it would do: it asks
// whether a process holds the agent's lock (lockHeld), and names such an
// agent in skipped, as gc would.
func sweepKept(store checkpoint.Store, dryRun bool) keptSweep {
	var k keptSweep
	if _, dir := store.(interface{ Dir() string }); dir {
		return k
	}
	if _, named := store.(interface{ Identity() string }); !named {
		return k
	}
	temp, state := localRootOf(store), ""
	if _, err := os.Lstat(temp); err != nil || checkStagingOf(store) != nil {
		temp = "" // none, or not this user's alone: not read
	}
	if s, err := stateDir(); err == nil {
		state = filepath.Join(s, "agents", storeDigest(store))
	}
	for _, id := range keptAgents(temp, state) {
		k.agent(store, id, join(temp, id), join(state, id), dryRun)
	}
	return k
}

// join is filepath.Join of dir and name, or "" for no dir.
func join(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

// keptAgents are the agents of which dirs hold a directory that keeps
// something (keptEntries), sorted.
func keptAgents(dirs ...string) []string {
	var ids []string
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			id := e.Name()
			if !e.IsDir() || checkpoint.CheckID(id) != nil || slices.Contains(ids, id) {
				continue
			}
			if slices.ContainsFunc(keptEntries, func(n string) bool { return exists(filepath.Join(dir, id, n)) }) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// keptPlan is what sweepKept does with an agent's directories: remove
// those in remove, and move the kept changes of temp to state's.
type keptPlan struct {
	remove []string
	move   bool
}

func (p keptPlan) empty() bool { return len(p.remove) == 0 && !p.move }

// planKept decides, from the store as it is, what to do with agent id's
// directories temp and state (either "" for none): remove each that
// keeps for an agent the store does not have (keptGone); move the kept
// changes of temp to state when the state directory keeps none; remove
// them when it does (they are read no more: a move cut off before it
// removed them). An agent that cannot be read is left: ok is false.
func planKept(store checkpoint.Store, id, temp, state string) (p keptPlan, ok bool) {
	rec, err := store.Read(id)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return p, false
	}
	for _, dir := range []string{temp, state} {
		if dir != "" && exists(dir) && keptGone(rec, dir) {
			p.remove = append(p.remove, dir)
		}
	}
	if rec == nil || temp == "" || state == "" || slices.Contains(p.remove, temp) || !exists(filepath.Join(temp, "changes")) {
		return p, true
	}
	if exists(filepath.Join(state, "changes")) {
		p.remove = append(p.remove, filepath.Join(temp, "changes"))
	} else {
		p.move = true
	}
	return p, true
}

// keptGone says whether dir keeps for an agent the store does not have:
// the agent rec is not there (nil), or dir's incarnationFile names
// another first run than rec's (the agent was removed and made again).
// A dir that names none (an older cairn's) is the agent's.
func keptGone(rec *checkpoint.Recovered, dir string) bool {
	if rec == nil {
		return true
	}
	b, err := os.ReadFile(filepath.Join(dir, incarnationFile))
	return err == nil && len(rec.State.Runs) > 0 && string(b) != rec.State.Runs[0].ID
}

// agent sweeps what this node keeps of agent id, in its directories temp
// and state: planned without the lock, then, unless it is a dry run,
// planned again under it and done; a dry run asks whether the lock is
// held instead of taking it.
func (k *keptSweep) agent(store checkpoint.Store, id, temp, state string, dryRun bool) {
	p, ok := planKept(store, id, temp, state)
	if !ok || p.empty() {
		return
	}
	if dryRun {
		// What gc would do now: leave it if a process holds it, its
		// lock asked, not taken.
		switch held, err := lockHeld(store, id); {
		case err != nil:
			k.unremoved = append(k.unremoved, checkpoint.Unremoved{Dir: firstDir(temp, state),
				Reason: fmt.Sprintf("what this node keeps of agent %s would be left: whether a process holds its lock could not be read: %v", id, err)})
		case held:
			k.skipped = append(k.skipped, id)
		default:
			k.done(id, p, temp, state)
		}
		return
	}
	lock, err := store.Lock(id, checkpoint.ThisProcess("gc"))
	if errors.Is(err, checkpoint.ErrLocked) {
		k.skipped = append(k.skipped, id)
		return
	}
	if err != nil {
		k.unremoved = append(k.unremoved, checkpoint.Unremoved{Dir: firstDir(temp, state),
			Reason: fmt.Sprintf("what this node keeps of agent %s is left: its lock could not be taken: %v", id, err)})
		return
	}
	defer lock.Unlock()
	if p, ok = planKept(store, id, temp, state); !ok {
		return
	}
	for _, dir := range p.remove {
		if err := os.RemoveAll(dir); err != nil {
			k.unremoved = append(k.unremoved, checkpoint.Unremoved{Dir: dir, Reason: err.Error()})
			return
		}
	}
	if p.move {
		if err := moveKept(temp, state); err != nil {
			k.unremoved = append(k.unremoved, checkpoint.Unremoved{Dir: filepath.Join(temp, "changes"),
				Reason: fmt.Sprintf("could not move it to %s: %v", filepath.Join(state, "changes"), err)})
			return
		}
	}
	k.done(id, p, temp, state)
}

// done records what p did (or, in a dry run, would do).
func (k *keptSweep) done(id string, p keptPlan, temp, state string) {
	for _, dir := range p.remove {
		k.kept = append(k.kept, checkpoint.KeptDir{Agent: id, Dir: dir, Gone: filepath.Base(dir) != "changes"})
	}
	if p.move {
		k.kept = append(k.kept, checkpoint.KeptDir{Agent: id, Dir: filepath.Join(temp, "changes"), MovedTo: filepath.Join(state, "changes")})
	}
}

// firstDir is the first of dirs that is not "".
func firstDir(dirs ...string) string {
	for _, d := range dirs {
		if d != "" {
			return d
		}
	}
	return ""
}

// moveKept moves the kept changes of temp (temp/changes) to state, the
// agent's directory in the state directory, which keeps none: most often
// across file systems, so by a copy, made durable whole beside its place
// (.changes-moving-RANDOM, synced file by file and directory by
// directory), renamed into place, and only then removed from temp. The
// incarnationFile of temp goes with them, first. A move cut off leaves
// the copy beside its place, removed by the next move, or the kept
// changes in both places, where the state directory's are read
// (keptDirOf) and the next sweep removes temp's.
func moveKept(temp, state string) error {
	made, err := makeDirs(state, "")
	if err != nil {
		return err
	}
	if err := syncDirs(made...); err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(temp, incarnationFile)); err == nil && !exists(filepath.Join(state, incarnationFile)) {
		if err := writeSynced(filepath.Join(state, incarnationFile), b, 0o600); err != nil {
			return err
		}
		if err := syncDirs(state); err != nil {
			return err
		}
	}
	entries, _ := os.ReadDir(state)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".changes-moving-") {
			if err := os.RemoveAll(filepath.Join(state, e.Name())); err != nil {
				return err
			}
		}
	}
	moving := filepath.Join(state, ".changes-moving-"+newID())
	if err := copySynced(filepath.Join(temp, "changes"), moving); err != nil {
		os.RemoveAll(moving)
		return err
	}
	if err := os.Rename(moving, filepath.Join(state, "changes")); err != nil {
		os.RemoveAll(moving)
		return err
	}
	if err := syncDirs(state); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(temp, "changes"))
}

// copySynced copies the tree src, its directories and regular files, to
// dst, which it makes, each file and directory synced.
func copySynced(src, dst string) error {
	var dirs []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, to)
			return os.Mkdir(to, 0o700)
		case d.Type().IsRegular():
			return copyFileSynced(path, to)
		}
		return fmt.Errorf("%s is neither a file nor a directory, which kept changes never are: move it by hand", path)
	})
	if err != nil {
		return err
	}
	slices.Reverse(dirs)
	return syncDirs(dirs...)
}

// copyFileSynced copies the file src to dst, a new file, synced.
func copyFileSynced(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return errors.Join(out.Sync(), out.Close())
}

// lockHeld says whether a process holds agent id's lock now, asked of the
// store (checkpoint.LockQuery: a file store's flock, a PostgreSQL store's
// lease), without taking it: what a dry run of gc asks where gc takes the
// lock. A store that cannot be asked is taken for one whose agents no
// process holds.
func lockHeld(store checkpoint.Store, id string) (bool, error) {
	q, ok := store.(checkpoint.LockQuery)
	if !ok {
		return false, nil
	}
	return q.Locked(id)
}
