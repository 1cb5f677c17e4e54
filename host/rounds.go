package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// Each round's changes are kept, for the last KeepRounds rounds that made
// any, so that `cairn diff` can show them and `cairn undo` can take the
// last one back: per call, its effect manifest, and the files before and
// after. They live beside the agent's journal:
//
//	changes/round-<N>/<call>/manifest.cbor
//	changes/round-<N>/<call>/before/<path>   what the workspace held
//	changes/round-<N>/<call>/after/<path>    what the call left
//
// A call's record is complete (renamed into place) before its changes are
// applied, so the "before" files are never the call's own output, even
// when a crash makes resume apply again.

// KeepRounds is how many rounds' changes are kept.
const KeepRounds = 10

// changesRoot is where an agent's rounds' changes are kept.
func (e *Engine) changesRoot(agent string) string {
	return filepath.Join(filepath.Dir(e.stagingRoot(agent)), "changes")
}

func callChanges(root string, round int, call string) string {
	return filepath.Join(root, fmt.Sprintf("round-%d", round), unsafeName.ReplaceAllString(call, "_"))
}

// keepChanges records a call's changes before they are applied: its
// manifest and, for each file it writes or deletes, the file before and
// after. A record that exists is complete and kept as it is. The record is
// durable (its files, its directories, the rename that completes it)
// before keepChanges returns: were the apply to survive a power cut and
// the record not, resume would record the call's own output as "before".
func keepChanges(root string, round int, call, workspace, staging string, effects sandbox.Effects) error {
	dir := callChanges(root, round, call)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	_, err := os.Stat(root)
	fresh := errors.Is(err, os.ErrNotExist)
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	manifest, err := effects.Marshal()
	if err != nil {
		return err
	}
	if err := writeSynced(filepath.Join(tmp, "manifest.cbor"), manifest); err != nil {
		return err
	}
	for _, e := range effects {
		if e.Base.IsFile() {
			if err := copyInto(filepath.Join(workspace, e.Path), filepath.Join(tmp, "before", e.Path)); err != nil {
				return err
			}
		}
		if e.New.IsFile() {
			if err := copyInto(sandbox.StagedFile(staging, e.Path), filepath.Join(tmp, "after", e.Path)); err != nil {
				return err
			}
		}
	}
	if err := syncTree(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	dirs := []string{filepath.Dir(dir), root}
	if fresh {
		dirs = append(dirs, filepath.Dir(root))
	}
	return syncDirs(dirs...)
}

// copyInto copies a file, durably, making its directories.
func copyInto(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	return writeSynced(to, b)
}

// writeSynced writes a new file and syncs it.
func writeSynced(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		syncpoint.Synced(name)
	}
	return errors.Join(err, f.Close())
}

// syncTree syncs every directory of a tree, so the entries made in them
// are durable.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return syncDirs(p)
	})
}

// trimChanges keeps the changes of the last KeepRounds rounds.
func trimChanges(root string) {
	rounds := changedRounds(root)
	for len(rounds) > KeepRounds {
		os.RemoveAll(filepath.Join(root, fmt.Sprintf("round-%d", rounds[0])))
		rounds = rounds[1:]
	}
}

// changedRounds lists the rounds whose changes are kept, ascending.
func changedRounds(root string) []int {
	entries, _ := os.ReadDir(root)
	var rounds []int
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "round-")); err == nil && strings.HasPrefix(e.Name(), "round-") {
			rounds = append(rounds, n)
		}
	}
	sort.Ints(rounds)
	return rounds
}

// FileChange is one path a round changed, as `cairn diff` shows it.
type FileChange struct {
	Call   string `json:"call"`
	Path   string `json:"path"`
	Op     string `json:"op"`
	Before []byte `json:"-"`
	After  []byte `json:"-"`
	// BeforeSize and AfterSize are -1 where there is no file.
	BeforeSize int64 `json:"before_size"`
	AfterSize  int64 `json:"after_size"`
}

// ErrNoChanges: the agent has no kept changes for that round.
var ErrNoChanges = errors.New("no changes kept for that round")

// Changes returns what a round changed in the workspace (round 0: the
// last round that changed anything), and which round that is.
func (e *Engine) Changes(agent string, round int) (int, []FileChange, error) {
	if !e.store.Exists(agent) {
		return 0, nil, fmt.Errorf("agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	root := e.changesRoot(agent)
	if round == 0 {
		rounds := changedRounds(root)
		if len(rounds) == 0 {
			return 0, nil, fmt.Errorf("agent %q: %w (none of its last %d rounds changed a file)", agent, ErrNoChanges, KeepRounds)
		}
		round = rounds[len(rounds)-1]
	}
	dir := filepath.Join(root, fmt.Sprintf("round-%d", round))
	calls, err := os.ReadDir(dir)
	if err != nil {
		return round, nil, fmt.Errorf("agent %q round %d: %w (kept: the last %d rounds that changed files)", agent, round, ErrNoChanges, KeepRounds)
	}
	var out []FileChange
	for _, c := range calls {
		if !c.IsDir() || strings.HasSuffix(c.Name(), ".tmp") {
			continue
		}
		changes, err := readCallChanges(filepath.Join(dir, c.Name()), c.Name())
		if err != nil {
			return round, nil, err
		}
		out = append(out, changes...)
	}
	return round, out, nil
}

func readCallChanges(dir, call string) ([]FileChange, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.cbor"))
	if err != nil {
		return nil, err
	}
	effects, err := sandbox.DecodeEffects(b)
	if err != nil {
		return nil, fmt.Errorf("changes of call %s: %w", call, err)
	}
	var out []FileChange
	for _, e := range effects {
		fc := FileChange{Call: call, Path: e.Path, Op: string(e.Op), BeforeSize: -1, AfterSize: -1}
		if e.Base.IsFile() {
			fc.Before, _ = os.ReadFile(filepath.Join(dir, "before", e.Path))
			fc.BeforeSize = e.Base.Size
		}
		if e.New.IsFile() {
			fc.After, _ = os.ReadFile(filepath.Join(dir, "after", e.Path))
			fc.AfterSize = e.New.Size
		}
		out = append(out, fc)
	}
	return out, nil
}
