package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/syncpoint"
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
// it held before; a path that holds what it held before already (an undo
// killed part way put it back) counts as restored; a path changed since
// is left alone and named. The conversation is not rewound: the next run
// tells the model, as for any change made outside it. Undo again to go
// further back, as far as the kept rounds (the last 10) reach. It takes
// the agent's lock.
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
	if e.keptForAnother(agent, rec.State) {
		// Of an agent of this id that was removed: none of it is this
		// one's to take back.
		if err := e.dropLeftovers(agent); err != nil {
			return nil, err
		}
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
	modes := &pastModes{e: e, agent: agent, round: round}
	for _, c := range slices.Backward(calls) {
		if err := undoCall(ws, c, modes, u); err != nil {
			return u, err
		}
	}
	return u, forgetRound(dir)
}

// undoneSuffix names a round's kept changes that undo took back, or a
// run's trim (trimChanges) let go of, and is removing.
const undoneSuffix = ".undone"

// forgetRound removes the kept changes of a round undo took back, all at
// once: the directory is renamed aside (and the rename made durable)
// before its records go, so that an undo stopped part way through the
// removal does not leave the round, or part of it, to be taken back
// again. What a stopped removal leaves aside, the next undo or trim
// (trimChanges) removes.
func forgetRound(dir string) error {
	aside := dir + undoneSuffix
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "round-*"+undoneSuffix))
	for _, d := range left {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	if err := os.Rename(dir, aside); err != nil {
		return err
	}
	if err := syncpoint.SyncFile(filepath.Dir(dir)); err != nil {
		return err
	}
	return os.RemoveAll(aside)
}

// pastModes are the modes of the workspace's files at the boundary before
// a round, as the store's pasts keep them, read once when first asked.
type pastModes struct {
	e     *Engine
	agent string
	round int

	read    bool
	entries map[string]checkpoint.WorkspaceEntry
}

// of is the mode of the file, or with dir the directory, at path before
// the round; 0 when the pasts keep none (the store keeps no pasts, or not
// of that boundary: trimmed, lost, the copy off).
func (m *pastModes) of(path string, dir bool) fs.FileMode {
	if !m.read {
		m.read = true
		if tl, ok := m.e.store.(checkpoint.Timeline); ok {
			if pasts, err := tl.Pasts(m.agent); err == nil {
				entries, _ := checkpoint.WorkspaceAt(m.e.store, pasts, m.agent, m.round-1)
				m.entries = make(map[string]checkpoint.WorkspaceEntry, len(entries))
				for _, w := range entries {
					m.entries[w.Path] = w
				}
			}
		}
	}
	if w, ok := m.entries[path]; ok && w.Dir == dir {
		return fs.FileMode(w.Mode).Perm()
	}
	return 0
}

// undoCall restores the paths of one call's kept changes, through ws so
// that nothing outside the workspace is touched. It streams each file,
// the kept one and the workspace's, never holding one in memory: a call
// may have kept up to its staging limit.
//
// It takes the call's changes back as Apply made them, in reverse: what
// the call made (a file, a directory, the new kind of a path whose kind
// it changed) is removed first, deepest first, and then what it removed
// or replaced is put back, parents first. So a file the call turned into
// a directory of files, or a directory it turned into a file, comes back
// whole. Which paths still hold what the call left is decided before
// anything is changed; a path inside one changed since is left too.
func undoCall(ws *os.Root, path string, modes *pastModes, u *Undone) error {
	idx, err := indexKeptChanges(path)
	if err != nil {
		return err
	}
	effects, err := overlay.DecodeEffects(idx.manifest)
	if err != nil {
		return err
	}
	left := map[string]bool{}
	leave := func(p string) {
		left[p] = true
		u.Conflicts = append(u.Conflicts, p)
	}
	inLeft := func(p string) bool {
		for d := pathpkg.Dir(p); d != "." && d != "/"; d = pathpkg.Dir(d) {
			if left[d] {
				return true
			}
		}
		return false
	}
	back := map[string]bool{}
	for _, e := range effects {
		p := filepath.FromSlash(e.Path)
		switch {
		case inLeft(e.Path):
			leave(e.Path)
		case holds(ws, p, e.New):
		case holds(ws, p, e.Base):
			// Already what it held before: an undo that stopped before it
			// forgot the round (killed) put it back.
			back[e.Path] = true
			u.Restored = append(u.Restored, e.Path)
		default:
			leave(e.Path)
		}
	}
	// What the call made goes first, children before their parents.
	for _, e := range slices.Backward(effects) {
		if left[e.Path] || back[e.Path] || !e.New.Exists || (e.Base.Exists && e.Base.Dir == e.New.Dir) {
			continue
		}
		if err := ws.Remove(filepath.FromSlash(e.Path)); err != nil {
			if e.New.Dir && dirNotEmpty(err) {
				// A directory the round made holds what was put or left
				// in it since (a file changed after the round is left):
				// it is left too, as a path changed since is.
				leave(e.Path)
				continue
			}
			return fmt.Errorf("undo %s: %w", e.Path, err)
		}
		if !e.Base.Exists {
			u.Restored = append(u.Restored, e.Path)
		}
	}
	// Then what it removed or replaced comes back, parents first.
	for _, e := range effects {
		if left[e.Path] || back[e.Path] || inLeft(e.Path) {
			continue
		}
		if !e.Base.Exists {
			continue // taken back above
		}
		target := filepath.FromSlash(e.Path)
		if err := restore(ws, target, idx.restore[e.Path], e.Base, baseMode(e, modes)); err != nil {
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
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// Under a file there is nothing.
		return !v.Exists
	case err != nil || !v.Exists:
		return false
	case v.Dir:
		return fi.IsDir()
	case !fi.Mode().IsRegular():
		return false
	}
	f, err := ws.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	return err == nil && [sha256.Size]byte(h.Sum(nil)) == v.Hash
}

// baseMode is the permission the file or directory a change replaced had.
// A guest cannot change a mode, and a file it writes, or removes and makes
// again, keeps the mode the workspace's file had, which the effect
// records as the one it is applied with: that is the file's mode before.
// A file or directory the change removed has no mode in its effect: it
// had the mode the store's pasts keep of it at the boundary before the
// round (the guest could not change it since), or, where they keep none,
// 0644 for a file and 0755 for a directory, as a rebuilt workspace
// assumes.
func baseMode(e overlay.Effect, modes *pastModes) fs.FileMode {
	switch {
	case !e.Base.Exists:
		return 0 // nothing is put back
	case e.Base.IsFile() && e.New.IsFile() && e.Mode != 0:
		return e.Mode.Perm()
	}
	if m := modes.of(e.Path, e.Base.Dir); m != 0 {
		return m
	}
	if e.Base.Dir {
		return 0o755
	}
	return 0o644
}

// restore puts back what a path held before: a file's kept content with
// its mode, nothing, or a directory.
func restore(ws *os.Root, target string, from opener, base overlay.Version, mode fs.FileMode) error {
	switch {
	case base.IsFile():
		return restoreFile(ws, target, from, base, mode)
	case base.Dir:
		if err := ws.MkdirAll(target, 0o755); err != nil {
			return err
		}
		return ws.Chmod(target, mode)
	default:
		return ws.Remove(target)
	}
}

// restoreFile streams a file's kept content from into a file beside
// target, gives it mode, whatever the umask, and renames it over target
// once it is what the file held (base). A file kept without content held
// none.
func restoreFile(ws *os.Root, target string, from opener, base overlay.Version, mode fs.FileMode) error {
	var src io.Reader = strings.NewReader("")
	if from != nil {
		r, err := from()
		if err != nil {
			return err
		}
		defer r.Close()
		src = r
	}
	tmp := undoTemp(target)
	f, err := ws.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), src)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		// Durable before the rename names it, and the rename before undo
		// removes the round's kept record: a power cut never leaves the
		// path empty with what it held gone.
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil && [sha256.Size]byte(h.Sum(nil)) != base.Hash {
		err = fmt.Errorf("the kept content is not what the file held (%s)", base)
	}
	if err != nil {
		ws.Remove(tmp)
		return err
	}
	if err := ws.Rename(tmp, target); err != nil {
		return err
	}
	return syncDirIn(ws, filepath.Dir(target))
}

// undoTempPrefix starts the name of the file restoreFile writes beside
// the one it restores: a name of Apply's temporary files
// (overlay.IsApplyTemp), which a guest cannot make and a copy of the
// workspace leaves out, so that no file of the workspace is so named.
const undoTempPrefix = ".cairn-apply-undo-"

// undoTemp is the file beside target that restoreFile writes to, the
// same on every try, so that a try after a crash replaces what the
// crashed one left.
func undoTemp(target string) string {
	sum := sha256.Sum256([]byte(filepath.Base(target)))
	return filepath.Join(filepath.Dir(target), undoTempPrefix+hex.EncodeToString(sum[:8]))
}

// syncDirIn makes the names in ws's directory dir durable.
func syncDirIn(ws *os.Root, dir string) error {
	d, err := ws.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// dirNotEmpty says err is removing a directory that is not empty.
func dirNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
