package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/plural"
)

// ErrWorkspaceDiffers: a directory given as an agent's workspace holds
// something other than what the store keeps of it. A *WorkspaceDiffError
// says what.
var ErrWorkspaceDiffers = errors.New("workspace differs from the store's")

// ErrNoCopy: the store keeps no copy of the agent's workspace.
var ErrNoCopy = errors.New("the store keeps no copy of the workspace")

// WorkspaceDiff is one path where a directory and the store's copy of a
// workspace differ.
type WorkspaceDiff struct {
	Path string `json:"path"`
	// What is "content" (both have a file, not the same), "missing" (only
	// the store has it), "extra" (only the directory has it) or "kind" (a
	// file in one, a directory in the other).
	What string `json:"what"`
}

// WorkspaceDiffError is ErrWorkspaceDiffers with the differences.
type WorkspaceDiffError struct {
	Agent, Dir string
	Round      int
	Diffs      []WorkspaceDiff
}

func (e *WorkspaceDiffError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace %s differs from what the store keeps of agent %q at round %d in %s:", e.Dir, e.Agent, e.Round, plural.Count(len(e.Diffs), "path"))
	writeDiffs(&b, e.Diffs)
	b.WriteString("; nothing was changed: give --workspace an empty directory, or add --take-store-workspace " +
		"to make this one what the store keeps (its differing files are replaced, its extra ones removed)")
	return b.String()
}

func (e *WorkspaceDiffError) Is(target error) bool { return target == ErrWorkspaceDiffers }

// writeDiffs writes the first ten of diffs, each " PATH (WHAT)", and "…"
// for the rest.
func writeDiffs(b *strings.Builder, diffs []WorkspaceDiff) {
	for i, d := range diffs {
		if i == 10 {
			fmt.Fprintf(b, " …")
			break
		}
		fmt.Fprintf(b, " %s (%s)", d.Path, d.What)
		if i < len(diffs)-1 && i < 9 {
			b.WriteString(",")
		}
	}
}

// materializeAt writes the workspace m into dir, which must be missing or
// empty. Every path is resolved inside dir; each file is synced. If it
// fails (a blob that cannot be read, a full disk), what it wrote is
// removed, so that dir is as it was and a retry finds it empty.
func materializeAt(s checkpoint.Store, m []checkpoint.WorkspaceEntry, dir string) (err error) {
	made, err := makeEmptyDir(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			made.undo()
		}
	}()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, e := range m {
		if err := placeEntry(s, root, e); err != nil {
			return fmt.Errorf("write %s into %s: %w", e.Path, dir, err)
		}
	}
	return nil
}

// madeDir is a workspace directory about to be filled, and what was there
// before, so that a fill that fails can be taken back.
type madeDir struct {
	dir string
	// top is the outermost directory makeEmptyDir made for dir (dir
	// itself, or a parent that was missing too); empty when dir was there.
	top string
}

// makeEmptyDir makes dir, with its missing parents, or checks that it is
// empty.
//
// # Errors
//
// ErrWorkspaceNotEmpty for a directory that holds anything.
func makeEmptyDir(dir string) (*madeDir, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("workspace %s %w", dir, ErrWorkspaceNotEmpty)
	}
	d := &madeDir{dir: dir}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		d.top = p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, withFillAdvice(err, dir)
	}
	return d, nil
}

// undo removes what was made in and for the directory since makeEmptyDir:
// the directories it made, or, in a directory that was there (and empty),
// everything in it, never the directory itself.
func (d *madeDir) undo() {
	if d.top != "" {
		os.RemoveAll(d.top)
		return
	}
	entries, _ := os.ReadDir(d.dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(d.dir, e.Name()))
	}
}

// placeEntry makes one entry of a manifest in root, replacing a file that
// is there.
func placeEntry(s checkpoint.Store, root *os.Root, e checkpoint.WorkspaceEntry) error {
	name := filepath.FromSlash(e.Path)
	if e.Dir {
		return root.MkdirAll(name, os.FileMode(e.Mode).Perm()|0o700)
	}
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	data, err := s.Blob(e.Digest)
	if err != nil {
		return err
	}
	mode := os.FileMode(e.Mode).Perm()
	if mode == 0 {
		mode = 0o644
	}
	tmp := name + ".cairn-materialize.tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		root.Remove(tmp)
		return err
	}
	return root.Rename(tmp, name)
}

// reconcile compares dir with the workspace m, hashing every file. A
// path that holds what pending (the changes of calls settled and not
// recorded applied, see settledInTail) makes of it is no difference: a
// stop between a call's apply and its record leaves them there, whole or
// in part, and the resume applies them again as already made.
func reconcile(m, pending []checkpoint.WorkspaceEntry, dir string) ([]WorkspaceDiff, error) {
	have, err := scanWorkspace(dir, WorkspaceLimit{Files: 1 << 30, Bytes: 1 << 62}, hashFile)
	if err != nil {
		return nil, err
	}
	diffs := differences(m, have)
	if len(diffs) == 0 || len(pending) == 0 {
		return diffs, nil
	}
	after := map[string]bool{}
	for _, d := range differences(checkpoint.ApplyChanges(m, pending), have) {
		after[d.Path] = true
	}
	return slices.DeleteFunc(diffs, func(d WorkspaceDiff) bool { return !after[d.Path] }), nil
}

// differences are the paths where have (a scan of a directory) differs
// from the workspace m.
func differences(m, have []checkpoint.WorkspaceEntry) []WorkspaceDiff {
	byPath := map[string]checkpoint.WorkspaceEntry{}
	for _, e := range have {
		byPath[e.Path] = e
	}
	var diffs []WorkspaceDiff
	for _, want := range m {
		got, ok := byPath[want.Path]
		delete(byPath, want.Path)
		switch {
		case !ok:
			diffs = append(diffs, WorkspaceDiff{want.Path, "missing"})
		case got.Dir != want.Dir:
			diffs = append(diffs, WorkspaceDiff{want.Path, "kind"})
		case !got.Dir && got.Digest != want.Digest:
			diffs = append(diffs, WorkspaceDiff{want.Path, "content"})
		}
	}
	for _, e := range have {
		if _, ok := byPath[e.Path]; ok && !below(e.Path, diffs) {
			diffs = append(diffs, WorkspaceDiff{e.Path, "extra"})
		}
	}
	return diffs
}

// below reports whether p is inside an extra directory already listed.
func below(p string, diffs []WorkspaceDiff) bool {
	for _, d := range diffs {
		if d.What == "extra" && strings.HasPrefix(p, d.Path+"/") {
			return true
		}
	}
	return false
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// takeStore makes dir what the store keeps: the differing and missing
// paths are written from the store, the extra ones removed.
func takeStore(s checkpoint.Store, m []checkpoint.WorkspaceEntry, dir string, diffs []WorkspaceDiff) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	byPath := map[string]checkpoint.WorkspaceEntry{}
	for _, e := range m {
		byPath[e.Path] = e
	}
	for _, d := range diffs {
		if d.What == "extra" || d.What == "kind" {
			if err := root.RemoveAll(filepath.FromSlash(d.Path)); err != nil {
				return fmt.Errorf("remove %s from %s: %w", d.Path, dir, err)
			}
		}
		if e, ok := byPath[d.Path]; ok {
			if err := placeEntry(s, root, e); err != nil {
				return fmt.Errorf("write %s into %s: %w", d.Path, dir, err)
			}
		}
	}
	return nil
}

// linkedWorkspace is the directory a fork or resume --workspace makes,
// holds and fills for the workspace dir (absolute): dir, or, where dir is
// a symbolic link, the directory it leads to, which becomes the agent's
// workspace. A fill's directory renamed over the link would replace it,
// and the flock a fill holds is the directory's, not the link's.
//
// # Errors
//
// ErrMissing when dir is a link that leads nowhere, or not to a
// directory: nothing is made where it leads.
func linkedWorkspace(dir string) (string, error) {
	if fi, err := os.Lstat(dir); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return dir, nil
	}
	to, _ := os.Readlink(dir)
	target, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", missingError{fmt.Errorf("workspace %s is a symbolic link to %s, which is not there: make that directory, or give another", dir, to)}
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return "", missingError{fmt.Errorf("workspace %s is a symbolic link to %s, which is not a directory: give another", dir, to)}
	}
	return target, nil
}
