package host

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Inspection is an agent as it stands in the store: what `cairn show`,
// `cairn log` and `cairn runs` print. Reading it takes no lock and changes
// nothing, so it works while another process runs the agent (it then
// sees the last committed boundary).
type Inspection struct {
	Summary checkpoint.Summary
	// State is the agent's state at its last boundary.
	State *checkpoint.State
	// Tail holds the records of a round that was interrupted, if any.
	Tail []checkpoint.Record
	// AgentFile is the agent file the agent runs with, as stored.
	AgentFile []byte
	// Bookmarks are the agent's snapshots, oldest first.
	Bookmarks []checkpoint.Bookmark
}

// Inspect reads an agent from the store.
//
// # Errors
//
// checkpoint.ErrNotFound for an unknown agent; the store's errors (a
// *checkpoint.CorruptError, checkpoint.ErrFutureSchema) for one that
// cannot be read.
func Inspect(ctx context.Context, store checkpoint.Store, id string) (*Inspection, error) {
	if err := usableNow(ctx, store); err != nil {
		return nil, err
	}
	return inspect(store, id)
}

// Awaiting lists the calls that await a person's decision, as Pending
// does, from what the inspection read.
func (in *Inspection) Awaiting() []ApprovalRequest {
	return awaiting(in.Summary.ID, in.State, in.Tail)
}

// inspect is Inspect of a usable store.
func inspect(store checkpoint.Store, id string) (*Inspection, error) {
	rec, sum, err := readSummarised(store, id)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Summary: sum, State: rec.State, Tail: rec.Tail}
	if in.Bookmarks, err = store.Bookmarks(id); err != nil {
		return nil, err
	}
	if d := rec.State.Definition.AgentFile; d != "" {
		if in.AgentFile, err = store.Blob(d); err != nil {
			return nil, fmt.Errorf("agent file of agent %q: %w", id, err)
		}
	}
	return in, nil
}

// Collect removes what the store no longer needs (see
// checkpoint.FileStore.Collect), and what a fork or resume killed while it
// filled a workspace left, as the marks of the store's fills that no
// process holds name it (sweepMarked), wherever a fill was killed: a fill
// directory, and the empty directories a fork or resume made for its
// workspace before it was killed; and what a fill of an older cairn, which
// marked none, was killed leaving beside an agent's workspace, named after
// the agent and the workspace (sweepOlderFills). It names in Collected.Fills and Collected.Made
// each directory it removed, in Collected.Unremoved each it could not, with why, and in Collected.Unmade the workspaces of forks killed before
// they were done, which it leaves as they are. For a store that keeps
// nothing on this node itself (PostgreSQL), it removes what this node
// kept of an agent the store no longer has, and moves the kept changes an
// older cairn kept in the temp directory to the state directory, each
// under the agent's lock (sweepKept), and names them in Collected.Kept. A
// dry run removes none, and names those it would remove. A store that keeps nothing on disk has
// nothing to collect.
func Collect(ctx context.Context, store checkpoint.Store, keep checkpoint.Retention) (*checkpoint.Collected, error) {
	if err := usableNow(ctx, store); err != nil {
		return nil, err
	}
	c, ok := store.(interface {
		Collect(checkpoint.Retention) (*checkpoint.Collected, error)
	})
	if !ok {
		return &checkpoint.Collected{Files: []string{}}, nil
	}
	keep.MarkTail = markTailFiles
	got, err := c.Collect(keep)
	if got == nil {
		return got, err
	}
	got.Fills, got.Made, got.Unmade, got.Unremoved = sweepMarked(store, keep.DryRun)
	older, unremoved := sweepOlderFills(store, keep.DryRun, got.Fills)
	got.Fills, got.Unremoved = append(got.Fills, older...), append(got.Unremoved, unremoved...)
	if err == nil {
		k := sweepKept(store, keep.DryRun)
		got.Kept, got.Unremoved = k.kept, append(got.Unremoved, k.unremoved...)
		for _, id := range k.skipped {
			if !slices.Contains(got.Skipped, id) {
				got.Skipped = append(got.Skipped, id)
			}
		}
	}
	slices.Sort(got.Fills)
	if got.Files == nil {
		got.Files = []string{} // a list, empty, for JSON too
	}
	return got, err
}

// markTailFiles marks the files that the finished calls of an interrupted
// round write, applied or not: the store keeps them (keepStagedFiles) so
// that a resume on another node can apply them, or rebuild the workspace
// with them, and no past names them until the round commits.
func markTailFiles(tail []checkpoint.Record, inUse map[string]bool) {
	for _, r := range tail {
		if r.Type != checkpoint.RecResult || r.Result == nil || len(r.Result.Effects) == 0 {
			continue
		}
		effects, err := overlay.DecodeEffects(r.Result.Effects)
		if err != nil {
			continue
		}
		for _, e := range effects {
			if e.New.IsFile() {
				inUse["sha256:"+hex.EncodeToString(e.New.Hash[:])] = true
			}
		}
	}
}

// readSummarised reads an agent and its Summary. A store that says who
// holds an agent's lock without a read (checkpoint.LockQuery) is read
// once; any other pays its Summary's read too.
func readSummarised(store checkpoint.Store, id string) (*checkpoint.Recovered, checkpoint.Summary, error) {
	q, ok := store.(checkpoint.LockQuery)
	if !ok {
		sum, err := store.Summary(id)
		if err == nil {
			err = sum.Err
		}
		if err != nil {
			return nil, sum, err
		}
		rec, err := store.Read(id)
		return rec, sum, err
	}
	rec, err := store.Read(id)
	if err != nil {
		return nil, checkpoint.Summary{}, err
	}
	locked, err := q.Locked(id)
	if err != nil {
		return nil, checkpoint.Summary{}, err
	}
	return rec, checkpoint.NewSummary(id, locked, rec, nil), nil
}
