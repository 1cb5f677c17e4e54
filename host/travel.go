package host

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/filepool"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// The workspace travels with the agent. When a store keeps pasts
// (checkpoint.Timeline), a run keeps there:
//
//   - at its start, when the store has no past for the boundary (a new
//     agent, or one last run by a cairn that kept none): the whole
//     workspace, each file a blob, and a manifest naming them;
//   - before each call's changes are applied: the content of every file
//     they write, as blobs (deduplicated: a content is stored once);
//   - as each round commits: the round's past, with the changes its calls
//     applied; or the whole workspace again, when the round's changes do
//     not hold all that changed (its sub-agents applied theirs, or files
//     changed outside the agent: an undo, a person's edit).
//
// So the store can rebuild the workspace at any boundary: Resume with
// ResumeOptions.Workspace on a node that never saw it, and Fork at any
// round. See docs/postgres.md for what this costs and its limits.

// WorkspaceLimit bounds the workspace a run keeps whole in the store at
// its start. Past it the run is refused, before anything is changed.
type WorkspaceLimit struct {
	// Files and Bytes bound its regular files and directories, and the
	// bytes of its files; zero means 20000 files and 1 GiB.
	Files int
	Bytes int64
	// Off keeps no copy: the agent does not travel, and cannot be forked
	// at a past round.
	Off bool
}

// defaultWorkspaceLimit is the limit when Config.WorkspaceLimit is zero.
var defaultWorkspaceLimit = WorkspaceLimit{Files: 20000, Bytes: 1 << 30}

func (l WorkspaceLimit) orDefault() WorkspaceLimit {
	if l.Files == 0 {
		l.Files = defaultWorkspaceLimit.Files
	}
	if l.Bytes == 0 {
		l.Bytes = defaultWorkspaceLimit.Bytes
	}
	return l
}

// ErrWorkspaceTooLarge: a workspace is past the limit of what is copied
// into the store (WorkspaceLimit) or into a bookmark.
var ErrWorkspaceTooLarge = errors.New("workspace too large")

// travel is what a run needs to keep its workspace in the store.
type travel struct {
	store    checkpoint.Store
	timeline checkpoint.Timeline // nil: the store keeps no past
	limit    WorkspaceLimit
	// roundChanges are the changes the round's calls applied.
	roundChanges []checkpoint.WorkspaceEntry
	// outside says the round began with news of files changed outside
	// the agent (an undo, a person's edit), which its calls' changes do
	// not hold.
	outside bool
}

func (e *Engine) newTravel() travel {
	return travel{store: e.store, timeline: e.timeline(), limit: e.limit.orDefault()}
}

// timeline is the store's Timeline, or nil when it keeps no past or the
// limit turns the copy off.
func (e *Engine) timeline() checkpoint.Timeline {
	if e.limit.Off {
		return nil
	}
	tl, _ := e.store.(checkpoint.Timeline)
	return tl
}

// storeBase stores a new agent's workspace, before the agent is made, and
// returns its manifest's digest; "" when the store keeps no pasts.
func (e *Engine) storeBase(ws string) (string, error) {
	if e.timeline() == nil {
		return "", nil
	}
	return storeWorkspace(e.store, ws, e.limit.orDefault())
}

// keepBase keeps the whole workspace at the boundary unless the store has
// the boundary's past already.
func (r *run) keepBase() error {
	if r.timeline == nil {
		return nil
	}
	st := r.state()
	newest, ok, err := r.timeline.NewestPast(r.agentID)
	if err != nil {
		return fmt.Errorf("keep the workspace of agent %q: %w", r.agentID, err)
	}
	if ok && newest.Round >= st.Round {
		return nil
	}
	digest := st.WorkspaceBase
	if st.Round > 0 || digest == "" {
		if digest, err = storeWorkspace(r.store, r.workspace, r.limit); err != nil {
			return fmt.Errorf("keep the workspace of agent %q in the store: %w", r.agentID, err)
		}
	}
	p, err := checkpoint.NewPast(st, nil)
	if err != nil {
		return err
	}
	p.Base = digest
	if err := r.timeline.PutPast(r.agentID, p); err != nil {
		return fmt.Errorf("keep the workspace of agent %q: %w", r.agentID, err)
	}
	return nil
}

// storeWorkspace stores the workspace's files as blobs and its manifest
// as one more, and returns the manifest's digest.
func storeWorkspace(s checkpoint.Store, dir string, limit WorkspaceLimit) (string, error) {
	entries, err := scanWorkspace(dir, limit, nil)
	if err != nil {
		return "", err
	}
	if entries, err = putContents(s, dir, entries); err != nil {
		return "", err
	}
	m, err := checkpoint.EncodeManifest(entries)
	if err != nil {
		return "", err
	}
	return s.PutBlob(m)
}

// blobWriters is how many of a workspace's files are stored at once. Each
// blob the store lacks costs a file's fsync and its directory's: stored
// together, the syncs share the file system's journal commits, where one
// after another a workspace of a hundred new files took two hundred
// syncs in a row, seconds on a memory card.
const blobWriters = 8

// putContents stores the content of every file of entries (paths under
// dir), blobWriters at a time, and returns the entries with their digests
// filled in, and their sizes and modes as the files were read. A file gone
// since the scan is left out, and one replaced is kept as it was read: a
// workspace that agents share can lose or change a file to another
// agent's call while it is copied.
func putContents(s checkpoint.Store, dir string, entries []checkpoint.WorkspaceEntry) ([]checkpoint.WorkspaceEntry, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	next := make(chan int)
	errs := make([]error, blobWriters)
	gone := make([]bool, len(entries))
	var wg sync.WaitGroup
	for w := range blobWriters {
		wg.Go(func() {
			for i := range next {
				if errs[w] != nil {
					continue
				}
				data, mode, err := readRegular(root, filepath.FromSlash(entries[i].Path))
				switch {
				case errors.Is(err, fs.ErrNotExist):
					gone[i] = true
				case err == nil:
					entries[i].Size, entries[i].Mode = int64(len(data)), uint32(mode.Perm())
					entries[i].Digest, errs[w] = s.PutBlob(data)
				default:
					errs[w] = err
				}
			}
		})
	}
	for i := range entries {
		if !entries[i].Dir {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	kept := entries[:0]
	for i, e := range entries {
		if !gone[i] {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// readRegular reads the regular file name of root and returns its
// content and mode, as of one open, which does not block (a FIFO put there
// since is not waited on). Something other than a regular file there now
// is fs.ErrNotExist: the file is gone.
func readRegular(root *os.Root, name string) ([]byte, os.FileMode, error) {
	f, err := filepool.OpenRead(root, name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	data, err := io.ReadAll(f)
	return data, fi.Mode(), err
}

// scanWorkspace lists the regular files and directories of dir, each
// file's content named by what digest returns for its path (or left
// unnamed, with digest nil). Symlinks and special files are left out
// of the copy: a workspace rebuilt from it has none (docs/cli.md), though
// a tool sees a link that stays inside the workspace.
func scanWorkspace(dir string, limit WorkspaceLimit, digest func(path string) (string, error)) ([]checkpoint.WorkspaceEntry, error) {
	var out []checkpoint.WorkspaceEntry
	var total int64
	err := walkWorkspace(dir, func(p string, fi fs.FileInfo) error {
		total += fi.Size()
		if len(out) >= limit.Files || total > limit.Bytes {
			return tooLarge(dir, limit)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		e := checkpoint.WorkspaceEntry{Path: filepath.ToSlash(rel), Dir: fi.IsDir(), Mode: uint32(fi.Mode().Perm())}
		if !e.Dir {
			e.Size = fi.Size()
			if digest != nil {
				if e.Digest, err = digest(p); err != nil {
					return err
				}
			}
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func tooLarge(dir string, limit WorkspaceLimit) error {
	return fmt.Errorf("%w: %s holds more than %d files or %s, the limit of what the store keeps of a workspace; "+
		"raise it (--workspace-limit FILES,SIZE) or turn the copy off (--workspace-limit off: the agent then cannot "+
		"be resumed elsewhere with --workspace, nor forked at a past round)", ErrWorkspaceTooLarge, dir, limit.Files, Size(limit.Bytes))
}

// keepStagedFiles stores the content of every file a call's changes
// write, as the call finishes and before its result is journaled: so a
// node that resumes the agent from the store can apply them, though the
// staging is on the node that ran the call.
func (r *run) keepStagedFiles(staging string, effects overlay.Effects) error {
	if r.timeline == nil {
		return nil
	}
	for _, e := range effects {
		if !e.New.IsFile() {
			continue
		}
		data, err := os.ReadFile(overlay.StagedFile(staging, e.Path))
		if err != nil {
			return fmt.Errorf("keep %s in the store: %w", e.Path, err)
		}
		if _, err := r.store.PutBlob(data); err != nil {
			return fmt.Errorf("keep %s in the store: %w", e.Path, err)
		}
	}
	return nil
}

// beforeApply makes sure, before a call's changes are applied, that the
// store has the files they write, staging again from the store what a
// node that ran the call staged and this one lacks; and notes the changes
// for the round's past.
func (r *run) beforeApply(staging string, effects overlay.Effects) error {
	if r.timeline == nil {
		return nil
	}
	for _, e := range effects {
		if !e.New.IsFile() {
			continue
		}
		if err := r.stageFromStore(staging, e); err != nil {
			return fmt.Errorf("stage %s again from the store: %w", e.Path, err)
		}
	}
	if err := r.keepStagedFiles(staging, effects); err != nil {
		return err
	}
	r.noteChanges(effects)
	return nil
}

// stageFromStore writes a file's staged content from the store, unless it
// is staged here.
func (r *run) stageFromStore(staging string, e overlay.Effect) error {
	name := overlay.StagedFile(staging, e.Path)
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	data, err := r.store.Blob("sha256:" + hex.EncodeToString(e.New.Hash[:]))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	return writeSynced(name, data, 0o600)
}

// writeSynced writes a new file and syncs it.
func writeSynced(name string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Sync(), f.Close())
}

// noteChanges notes a call's applied changes for the round's past. The
// content of the files they write is in the store already.
func (r *run) noteChanges(effects overlay.Effects) {
	if r.timeline != nil {
		r.roundChanges = append(r.roundChanges, changesOf(effects)...)
	}
}

// changesOf is a call's effects as changes of a workspace manifest.
func changesOf(effects overlay.Effects) []checkpoint.WorkspaceEntry {
	out := make([]checkpoint.WorkspaceEntry, 0, len(effects))
	for _, e := range effects {
		c := checkpoint.WorkspaceEntry{Path: e.Path, Mode: uint32(e.Mode.Perm())}
		switch e.Op {
		case overlay.OpWrite:
			c.Digest, c.Size = "sha256:"+hex.EncodeToString(e.New.Hash[:]), e.New.Size
		case overlay.OpMkdir:
			c.Dir = true
		default:
			c.Gone = true
		}
		out = append(out, c)
	}
	return out
}

// appliedInTail are the changes the interrupted round's calls applied
// before the stop.
func appliedInTail(tail []checkpoint.Record) []checkpoint.WorkspaceEntry {
	return changesInTail(tail, func(k *keptCall) bool { return k.applied })
}

// settledInTail are the changes of the interrupted round's calls that were
// settled and not recorded applied: a stop between their apply and its
// record leaves them in the workspace, whole or in part.
func settledInTail(tail []checkpoint.Record) []checkpoint.WorkspaceEntry {
	return changesInTail(tail, func(k *keptCall) bool { return k.settled && !k.applied })
}

// changesInTail are the workspace changes of the finished calls of the
// interrupted round that pick takes, in the order the calls finished.
func changesInTail(tail []checkpoint.Record, pick func(*keptCall) bool) []checkpoint.WorkspaceEntry {
	kept := keptCalls(tail)
	var out []checkpoint.WorkspaceEntry
	for _, t := range tail {
		k := kept[t.Call]
		if t.Type != checkpoint.RecResult || k == nil || len(k.result.Result.Effects) == 0 || !pick(k) {
			continue
		}
		delete(kept, t.Call) // once, for its newest result
		if effects, err := overlay.DecodeEffects(k.result.Result.Effects); err == nil {
			out = append(out, changesOf(effects)...)
		}
	}
	return out
}

// noteApplied notes the changes of a call of the interrupted round that
// were applied before the stop.
func (r *run) noteApplied(k *keptCall) {
	if k == nil || len(k.result.Result.Effects) == 0 {
		return
	}
	if effects, err := overlay.DecodeEffects(k.result.Result.Effects); err == nil {
		r.noteChanges(effects)
	}
}

// keepPast keeps the past of the boundary just committed.
func (r *run) keepPast() error {
	if r.timeline == nil {
		return nil
	}
	p, err := checkpoint.NewPast(r.state(), r.roundChanges)
	if err != nil {
		return err
	}
	r.roundChanges = nil
	outside := r.outside
	r.outside = false
	if outside || roundDelegated(r.state()) {
		// Its sub-agents applied their changes through their own journals,
		// or something outside the agent changed files: the round's
		// changes do not hold them, so keep the whole workspace.
		if p.Base, err = storeWorkspace(r.store, r.workspace, r.limit); err != nil {
			return fmt.Errorf("keep round %d's workspace: %w", p.Round, err)
		}
		p.Changes = nil
	}
	if err := r.timeline.PutPast(r.agentID, p); err != nil {
		return fmt.Errorf("keep round %d's past: %w", p.Round, err)
	}
	return nil
}

// roundDelegated reports whether the last round of st handed tasks to
// sub-agents: its turn called the delegate tool.
func roundDelegated(st *checkpoint.State) bool {
	for i := len(st.Messages) - 1; i >= 0; i-- {
		switch m := &st.Messages[i]; m.Role {
		case conversation.RoleAssistant:
			return slices.ContainsFunc(m.ToolCalls, func(c conversation.ToolCall) bool { return c.Name == delegateName })
		case conversation.RoleUser:
			return false
		}
	}
	return false
}

// repairPast keeps the past of the boundary st when the process that
// committed its round died before it could, and the round before has one:
// the round's changes are then the file pool's entries of that round, each
// file written (its content in the store since its call finished) or
// deleted. What the pool does not keep is lost to the repaired past: the
// files' modes (0644 is assumed) and the directories the round made or
// removed (a file's directories are made for it). A round that handed
// tasks to sub-agents is not repaired: its sub-agents' changes are not in
// the pool, and the resume keeps the whole workspace at the boundary
// instead (keepBase), as keepPast would have.
func (e *Engine) repairPast(st *checkpoint.State) error {
	tl := e.timeline()
	if tl == nil || st.Round == 0 || roundDelegated(st) {
		return nil
	}
	newest, ok, err := tl.NewestPast(st.Agent)
	if err != nil || !ok || newest.Round != st.Round-1 {
		return err
	}
	var changes []checkpoint.WorkspaceEntry
	for _, f := range st.Files {
		switch {
		case f.Round != st.Round || f.Outside:
		case f.Op == "write":
			changes = append(changes, checkpoint.WorkspaceEntry{Path: f.Path, Size: f.Size, Mode: 0o644,
				Digest: "sha256:" + hex.EncodeToString(f.Hash[:])})
		case f.Op == "delete":
			changes = append(changes, checkpoint.WorkspaceEntry{Path: f.Path, Gone: true})
		}
	}
	p, err := checkpoint.NewPast(st, changes)
	if err != nil {
		return err
	}
	if err := tl.PutPast(st.Agent, p); err != nil {
		return fmt.Errorf("repair round %d's past of agent %q: %w", st.Round, st.Agent, err)
	}
	return nil
}
