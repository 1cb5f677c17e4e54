package host

import (
	"context"
	"fmt"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// pastChanges is what round n changed, rebuilt from the store's pasts: the
// workspace at the round before it and the round's changes. The calls are
// not named: a past keeps the changes of the round, not of each call.
// Known says the past lists the round's changes, none or some; it is
// false for a past that keeps the whole workspace in their place (the
// round's sub-agents applied theirs, or files changed outside the agent),
// which is not known to have changed nothing. The files' contents are
// read later (FileChange.Texts), without the agent's lock: `cairn gc
// --keep-rounds` may remove the round meanwhile, and the blobs only it and
// the rounds before it named, and a file found missing then is refused as
// removed (checkpoint.RoundTrimmedMeanwhile).
func (e *Engine) pastChanges(agent string, n int) (out []FileChange, known bool, err error) {
	tl, ok := e.store.(checkpoint.Timeline)
	if !ok {
		return nil, false, ErrNoCopy
	}
	pasts, err := tl.Pasts(agent)
	if err != nil {
		return nil, false, err
	}
	p, err := checkpoint.PastAt(pasts, agent, n)
	if err != nil {
		return nil, false, err
	}
	if err := checkpoint.TrimmedAt(p, agent); err != nil {
		return nil, false, err
	}
	before, err := checkpoint.WorkspaceAt(e.store, pasts, agent, n-1)
	if err != nil {
		return nil, false, err
	}
	was := map[string]checkpoint.WorkspaceEntry{}
	for _, w := range before {
		was[w.Path] = w
	}
	content := func(digest string) content {
		where := fmt.Sprintf("agent %q round %d", agent, n)
		read := blobContent(e.store, where, digest)
		return func(size int64) ([]byte, error) {
			b, err := read(size)
			return b, checkpoint.RoundTrimmedMeanwhile(e.store, agent, pasts, n, err)
		}
	}
	for _, c := range p.Changes {
		out = append(out, pastChange(content, was[c.Path], c))
		was[c.Path] = c
	}
	return out, p.Base == "", nil
}

// pastChange is one change of a past round, with the file before it,
// whose blobs Texts reads through content.
func pastChange(content func(digest string) content, was, c checkpoint.WorkspaceEntry) FileChange {
	fc := FileChange{Path: c.Path, BeforeSize: -1, AfterSize: -1}
	switch {
	case c.Gone && was.Dir:
		fc.Op = "rmdir"
	case c.Gone:
		fc.Op = "delete"
	case c.Dir:
		fc.Op = "mkdir"
	default:
		fc.Op = "write"
	}
	if was.Digest != "" && !was.Gone {
		fc.before, fc.BeforeSize = content(was.Digest), was.Size
	}
	if c.Digest != "" {
		fc.after, fc.AfterSize = content(c.Digest), c.Size
	}
	return fc
}

// lastPastChange is the last round the store's pasts say changed the
// workspace, or 0; and, when `cairn gc --keep-rounds` trimmed them, the
// round they start at (Past.Trimmed), or 0.
func (e *Engine) lastPastChange(agent string) (round, trimmed int) {
	tl, ok := e.store.(checkpoint.Timeline)
	if !ok {
		return 0, 0
	}
	pasts, _ := tl.Pasts(agent)
	if len(pasts) > 0 && pasts[0].Trimmed {
		trimmed = pasts[0].Round
	}
	for i := len(pasts) - 1; i >= 0; i-- {
		if len(pasts[i].Changes) > 0 {
			return pasts[i].Round, trimmed
		}
	}
	return 0, trimmed
}

// trimmedNoChange is the error of an agent whose changes this node does
// not keep (err), and whose pasts, which `cairn gc --keep-rounds` trimmed
// to start at round first, name no change either.
func trimmedNoChange(agent string, first int, err error) error {
	return fmt.Errorf("%w; nor do the store's pasts of rounds %d on, the ones `cairn gc --keep-rounds` kept: it removed those of "+
		"the rounds before %d, and the oldest round whose changes can be seen is %d", err, first+1, first, first+1)
}

// noRound is checkpoint.NoRound of the agent's round n: an error when the
// agent never had it. Nil when its state cannot be read: the caller's own
// reads say why.
func (e *Engine) noRound(agent string, n int) error {
	rec, err := e.store.Read(agent)
	if err != nil {
		return nil
	}
	var pasts []checkpoint.Past
	if tl, ok := e.store.(checkpoint.Timeline); ok {
		pasts, _ = tl.Pasts(agent)
	}
	return checkpoint.NoRound(pasts, agent, n, rec.State.Round)
}

// RoundMessages are the messages round n added to the conversation (n 0:
// none), from the store's pasts, and the agent's state at that round.
//
// # Errors
//
// checkpoint.ErrNotFound; checkpoint.ErrNoPast for a round the store
// keeps no past of (checkpoint.ErrNoRound, which is ErrNoPast too, for one
// the agent never had); ErrNoCopy for a store that keeps no pasts.
func RoundMessages(ctx context.Context, store checkpoint.Store, agent string, n int) ([]conversation.Message, *checkpoint.State, error) {
	if err := usableNow(ctx, store); err != nil {
		return nil, nil, err
	}
	rec, err := store.Read(agent)
	if err != nil {
		return nil, nil, err
	}
	tl, ok := store.(checkpoint.Timeline)
	if !ok {
		return nil, nil, fmt.Errorf("agent %q: %w: %T keeps no past", agent, ErrNoCopy, store)
	}
	pasts, err := tl.Pasts(agent)
	if err != nil {
		return nil, nil, err
	}
	if err := checkpoint.NoRound(pasts, agent, n, rec.State.Round); err != nil {
		return nil, nil, err
	}
	p, err := checkpoint.PastAt(pasts, agent, n)
	if err != nil {
		return nil, nil, err
	}
	st, err := checkpoint.StateAt(rec.State, p)
	if err != nil {
		return nil, nil, err
	}
	from := 0
	if err := checkpoint.TrimmedAt(p, agent); err != nil && n > 0 {
		return nil, nil, err
	}
	if n > 0 {
		prev, err := checkpoint.PastAt(pasts, agent, n-1)
		if err != nil {
			return nil, nil, err
		}
		from = min(prev.Messages, p.Messages)
	}
	return st.Messages[from:], st, nil
}
