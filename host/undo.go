package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Undone is what Undo did.
type Undone struct {
	Round    int      `json:"round"`
	Restored []string `json:"restored"`
	// Conflicts are paths left as they are, because they no longer hold
	// what the round left there.
	Conflicts []string `json:"conflicts,omitempty"`
}

// Undo takes back the workspace changes of the agent's last round that
// made any: each path that still holds what the round left gets back what
// it held before; a path changed since is left alone and named. The
// conversation is not rewound: the next run tells the model, as for any
// change made outside it. Undo again to go further back, as far as the
// kept rounds (the last 10) reach. It takes the agent's lock.
//
// # Errors
//
// checkpoint.ErrNotFound, checkpoint.ErrLocked, ErrNoChanges.
func (e *Engine) Undo(ctx context.Context, agent string) (*Undone, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	lock, err := e.store.Lock(agent, checkpoint.ThisProcess("undo"))
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	rec, err := e.store.Read(agent)
	if err != nil {
		return nil, err
	}
	round, _, err := e.keptChanges(agent, 0)
	if _, serr := os.Stat(e.changesRoot(agent)); errors.Is(err, ErrNoChanges) && errors.Is(serr, fs.ErrNotExist) {
		// This node never kept a change of the agent: another ran it.
		r, trimmed := e.lastPastChange(agent)
		if r > 0 {
			// Undo needs what a file held before, which the node that ran
			// the round keeps; the store's pasts keep only what it became.
			return nil, fmt.Errorf("agent %q: %w on this node: round %d changed files, and the node that ran it keeps what they held before; "+
				"undo there, or see the change with `cairn diff --round %d %s`", agent, ErrNoChanges, r, r, agent)
		}
		if trimmed > 0 {
			return nil, fmt.Errorf("%w; undo on the node that ran the agent, which keeps what its last %d rounds that changed files changed",
				trimmedNoChange(agent, trimmed, err), keepRounds)
		}
	}
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.changesRoot(agent), fmt.Sprintf("round-%d", round))
	calls, _, err := keptCallsOf(dir, rec.State)
	if err != nil {
		return nil, err
	}
	u := &Undone{Round: round}
	// Held as a run holds it to apply changes: another agent's apply
	// does not land between a path's check and its restore.
	defer lockWorkspace(rec.State.Definition.Workspace)()
	ws, err := os.OpenRoot(rec.State.Definition.Workspace)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	for _, c := range slices.Backward(calls) {
		if err := undoCall(ws, c, u); err != nil {
			return u, err
		}
	}
	return u, os.RemoveAll(dir)
}

// undoCall restores the paths of one call's kept changes, through ws so
// that nothing outside the workspace is touched.
func undoCall(ws *os.Root, path string, u *Undone) error {
	rec, effects, err := readKeptRecord(path)
	if err != nil {
		return err
	}
	for _, e := range slices.Backward(effects) {
		target := filepath.FromSlash(e.Path)
		if !holds(ws, target, e.New) {
			u.Conflicts = append(u.Conflicts, e.Path)
			continue
		}
		if err := restore(ws, target, rec.Before[e.Path], e.Base); err != nil {
			return fmt.Errorf("undo %s: %w", e.Path, err)
		}
		u.Restored = append(u.Restored, e.Path)
	}
	return nil
}

// holds reports whether the workspace path holds version v.
func holds(ws *os.Root, p string, v overlay.Version) bool {
	fi, err := ws.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return !v.Exists
	case err != nil || !v.Exists:
		return false
	case v.Dir:
		return fi.IsDir()
	}
	b, err := ws.ReadFile(p)
	return err == nil && fi.Mode().IsRegular() && sha256.Sum256(b) == v.Hash
}

// restore puts back what a path held before: a file's kept content,
// nothing, or a directory.
func restore(ws *os.Root, target string, b []byte, base overlay.Version) error {
	switch {
	case base.IsFile():
		if sha256.Sum256(b) != base.Hash {
			return fmt.Errorf("the kept content is not what the file held (%s)", base)
		}
		tmp := target + ".cairn-undo"
		if err := ws.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return ws.Rename(tmp, target)
	case base.Dir:
		return ws.MkdirAll(target, 0o755)
	default:
		return ws.Remove(target)
	}
}
