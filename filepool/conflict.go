package filepool

import (
	"context"
	"errors"
	"fmt"
)

// ErrConflict is matched by a *ConflictError.
var ErrConflict = errors.New("write conflict")

// ConflictError refuses a change to Path because the workspace no longer
// holds Base, the content the change was based on. Reason says who changed
// it, in words the model can act on.
type ConflictError struct {
	Path   string
	Base   Version
	Now    Version
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s changed since the call saw it: %s; read it again before changing it", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// CheckBase reports whether a change based on base (what the call saw at
// path: HashReader of the bytes it read, or the zero Version if it found no
// file) may be applied: nil if the workspace still holds base. Otherwise
// it returns a *ConflictError whose Reason names the call of this agent
// that changed the file first, if the record says one did, or says the
// file changed outside the agent.
//
// The check reads the workspace, not the record: a file that changed
// outside and changed back is no conflict.
//
// # Errors
//
// *ConflictError; ErrBadPath; ErrClosed; ctx's error.
func (p *Pool) CheckBase(ctx context.Context, path string, base Version) error {
	name, err := CleanPath(path)
	if err != nil {
		return err
	}
	now, bad, err := p.look(ctx, name)
	if err != nil {
		return err
	}
	if bad == "" && now == base {
		return nil
	}
	e, tracked := p.Lookup(name)
	return &ConflictError{Path: name, Base: base, Now: now, Reason: conflictReason(e, tracked, now, bad)}
}

func conflictReason(e Entry, tracked bool, now Version, bad string) string {
	switch {
	case bad != "":
		return "it is now something a tool cannot read (" + bad + ")"
	case tracked && e.Version() == now && !e.Outside && e.Op == OpWrite:
		return fmt.Sprintf("call %s of round %d wrote it first", e.Call, e.Round)
	case tracked && e.Version() == now && !e.Outside && e.Op == OpDelete:
		return fmt.Sprintf("call %s of round %d deleted it first", e.Call, e.Round)
	case !now.Exists:
		return "it was deleted outside the agent"
	}
	return "it was changed outside the agent"
}

// Stale reports whether the workspace file at a tracked path differs from
// the record, and how.
//
// # Errors
//
// ErrUntracked; ErrBadPath; ErrClosed; ctx's error.
func (p *Pool) Stale(ctx context.Context, path string) (Change, bool, error) {
	name, err := CleanPath(path)
	if err != nil {
		return Change{}, false, err
	}
	e, ok := p.Lookup(name)
	if !ok {
		return Change{}, false, fmt.Errorf("%s: %w", name, ErrUntracked)
	}
	now, bad, err := p.look(ctx, name)
	if err != nil {
		return Change{}, false, err
	}
	c, stale := diff(e, now, bad)
	return c, stale, nil
}
