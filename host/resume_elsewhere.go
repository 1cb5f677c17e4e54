package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/checkpoint"
)

// Stealer is a store whose locks are leases that can be taken from a
// holder that has not let go (pgstore.Store): the holder is fenced, and
// its next write fails.
type Stealer interface {
	Steal(agent string, h checkpoint.Holder) (checkpoint.Lock, error)
}

// ErrCannotSteal: ResumeOptions.Steal on a store whose locks cannot be
// taken from their holder.
var ErrCannotSteal = errors.New("this store's locks cannot be stolen")

// lockToResume takes the agent's lock, or steals it when asked to.
func (e *Engine) lockToResume(opts ResumeOptions, runID string) (checkpoint.Lock, error) {
	h := checkpoint.ThisProcess(runID)
	if !opts.Steal {
		return e.store.Lock(opts.ID, h)
	}
	s, ok := e.store.(Stealer)
	if !ok {
		return nil, fmt.Errorf("resume agent %q: %w: a directory's lock is a flock, let go when its holder dies; stop the holder instead", opts.ID, ErrCannotSteal)
	}
	return s.Steal(opts.ID, h)
}

// placeWorkspace puts the agent's workspace where ResumeOptions.Workspace
// says, from the store's copy at the boundary (with the changes the
// interrupted round applied before it stopped), and journals the agent's
// new workspace directory.
func (e *Engine) placeWorkspace(rec *checkpoint.Recovered, opts ResumeOptions, log checkpoint.Log) error {
	if opts.Strategy == StrategyManual {
		return nil // it changes nothing
	}
	if opts.Workspace != "" {
		if err := movesWithItsTree(rec, opts); err != nil {
			return err
		}
		if err := e.boundaryWritesKept(rec.State); err != nil {
			return fmt.Errorf("resume agent %q in %s: %w", opts.ID, opts.Workspace, err)
		}
	}
	if err := e.repairPast(rec.State); err != nil {
		return err
	}
	if opts.Workspace == "" {
		return nil
	}
	dir, err := filepath.Abs(opts.Workspace)
	if err == nil {
		dir, err = linkedWorkspace(dir)
	}
	if err != nil {
		return fmt.Errorf("resume agent %q: %w", opts.ID, err)
	}
	m, err := e.workspaceAt(rec.State, rec.State.Round)
	if err != nil {
		return fmt.Errorf("resume agent %q in %s: %w", opts.ID, dir, err)
	}
	m = checkpoint.ApplyChanges(m, appliedInTail(rec.Tail))
	if err := e.fillWorkspace(opts, m, settledInTail(rec.Tail), dir, rec.State.Round); err != nil {
		return err
	}
	if dir == rec.State.Definition.Workspace {
		return nil
	}
	def := rec.State.Definition
	def.Workspace = dir
	rec.State.Definition.Workspace = dir
	return log.Append(checkpoint.Record{Type: checkpoint.RecDefine, Time: now(), Definition: &def})
}

// movesWithItsTree refuses to give the agent a workspace from the store
// where its tree of agents would not follow it. A sub-agent works in its
// parent's workspace: moved alone, it would go on in one directory while
// its parent and siblings go on in another. An agent whose interrupted
// round had begun delegations has sub-agents that applied their changes
// to the workspace through their own journals, and the store's copy of
// its workspace holds them only once the round commits (keepPast):
// rebuilt from the boundary, the workspace would lack them, and the
// sub-agents, resumed in the directory they ran in, would go on changing
// that one.
func movesWithItsTree(rec *checkpoint.Recovered, opts ResumeOptions) error {
	switch {
	case rec.State.Parent != nil:
		return fmt.Errorf("resume agent %q in %s: a sub-agent works in its parent's workspace, %s, and moved alone it would split its tree's files; "+
			"nothing was changed: resume it without --workspace, or resume its top-level agent", opts.ID, opts.Workspace, rec.State.Definition.Workspace)
	case delegated(rec.Tail):
		return fmt.Errorf("resume agent %q in %s: round %d handed tasks to sub-agents before the stop, and the store's copy of the workspace "+
			"holds what they changed only once that round commits; nothing was changed: resume it without --workspace, where its workspace is %s, "+
			"and move it once the round has committed", opts.ID, opts.Workspace, rec.State.Round+1, rec.State.Definition.Workspace)
	}
	return nil
}

// boundaryWritesKept checks, before anything is written, that the store
// keeps what the boundary's round wrote (checkpoint.BoundaryWrites): the
// workspace at the boundary is rebuilt from them, and so is the past of
// that round when a crash lost it. An export taken where the blobs were
// missing, or a store that lost them, is refused here with nothing
// changed, where it would otherwise fail halfway with the past repaired
// to name a blob that is not there.
func (e *Engine) boundaryWritesKept(st *checkpoint.State) error {
	for _, d := range checkpoint.BoundaryWrites(st) {
		has, ok := hasBlob(e.store, d)
		if !ok {
			_, err := e.store.Blob(d)
			if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
				return err
			}
			has = err == nil
		}
		if !has {
			return fmt.Errorf("the store lacks what round %d wrote (blob %s), which the workspace here is rebuilt from; "+
				"resume the agent on the node that ran it, or export it from there again", st.Round, d)
		}
	}
	return nil
}

// fillWorkspace materializes m into an empty dir, or reconciles a full one
// (pending: see reconcile).
func (e *Engine) fillWorkspace(opts ResumeOptions, m, pending []checkpoint.WorkspaceEntry, dir string, round int) error {
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		// Marked with the directories it makes, as a fork's workspace: a
		// resume killed before it filled them leaves them empty, and gc
		// removes them (sweepMade).
		release, err := markFill(e.store, checkpoint.FillMark{Dir: dir, Makes: toMake(dir), Agent: opts.ID})
		if err != nil {
			return fmt.Errorf("resume agent %q: %w", opts.ID, err)
		}
		defer release(false)
		made, err := makeEmptyDir(dir)
		if err != nil {
			return fmt.Errorf("resume agent %q: %w", opts.ID, err)
		}
		held, err := holdWorkspace(dir)
		if err != nil {
			made.undo()
			return fmt.Errorf("resume agent %q: %w", opts.ID, err)
		}
		defer held.Close()
		if err := fillBeside(e.store, dir, opts.ID, func(d string) error { return materializeAt(e.store, m, d) }); err != nil {
			if !errors.Is(err, ErrWorkspaceNotEmpty) {
				made.undo() // else another's
			}
			return fmt.Errorf("resume agent %q: %w", opts.ID, err)
		}
		return nil
	}
	diffs, err := reconcile(m, pending, dir)
	if err != nil {
		return fmt.Errorf("resume agent %q: compare %s with the store: %w", opts.ID, dir, err)
	}
	if len(diffs) == 0 {
		return nil
	}
	if !opts.TakeStoreWorkspace {
		return &WorkspaceDiffError{Agent: opts.ID, Dir: dir, Round: round, Diffs: diffs}
	}
	if err := takeStore(e.store, m, dir, diffs); err != nil {
		return fmt.Errorf("resume agent %q: %w", opts.ID, err)
	}
	return nil
}

// workspaceAt is the store's copy of the agent's workspace at round n.
// An agent whose first run died before it kept its first past has the
// workspace it was made with in its state.
//
// # Errors
//
// ErrNoCopy when the store keeps no pasts; checkpoint.ErrNoPast when it
// has none for that round.
func (e *Engine) workspaceAt(st *checkpoint.State, n int) ([]checkpoint.WorkspaceEntry, error) {
	tl, ok := e.store.(checkpoint.Timeline)
	if !ok {
		return nil, fmt.Errorf("%w: %T keeps no past", ErrNoCopy, e.store)
	}
	pasts, err := tl.Pasts(st.Agent)
	if err != nil {
		return nil, err
	}
	if st.WorkspaceBase != "" && (len(pasts) == 0 || pasts[0].Round > 0) {
		pasts = append([]checkpoint.Past{{Round: 0, Base: st.WorkspaceBase}}, pasts...)
	}
	return checkpoint.WorkspaceAt(e.store, pasts, st.Agent, n)
}
