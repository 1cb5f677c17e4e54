package filepool

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairnrun/cairn/internal/plural"
)

// Kind is how a tracked path differs from the record.
type Kind string

// The kinds of Change.
const (
	Modified   Kind = "modified"   // a file still, with other content
	Deleted    Kind = "deleted"    // the file is gone
	Created    Kind = "created"    // recorded as absent, now a file
	Unreadable Kind = "unreadable" // something a tool cannot read: see Change.Reason
)

// Change is a tracked path whose workspace content differs from what the
// pool recorded.
type Change struct {
	Path string
	Kind Kind
	// Was is the pool's entry: what the agent last saw, and when.
	Was Entry
	// Now is what the workspace holds; the zero Version for Deleted and
	// Unreadable.
	Now Version
	// Reason says, for Unreadable, what is there instead ("a directory",
	// "path escapes from parent").
	Reason string
}

// diff compares an entry with what look found.
func diff(e Entry, now Version, bad string) (Change, bool) {
	c := Change{Path: e.Path, Was: e, Now: now}
	switch {
	case bad != "":
		c.Kind, c.Reason = Unreadable, bad
	case !e.Exists && now.Exists:
		c.Kind = Created
	case e.Exists && !now.Exists:
		c.Kind = Deleted
	case e.Exists && e.Hash != now.Hash:
		c.Kind = Modified
	default:
		return Change{}, false
	}
	return c, true
}

// Reconcile re-hashes every tracked path and returns those whose content
// differs from the record, sorted by path. It is authoritative: whatever
// happened while nobody watched, a difference is reported. It changes
// nothing: a caller that has told the agent calls Accept.
//
// # Errors
//
// ErrClosed, or ctx's error; a file that cannot be read is a Change of kind
// Unreadable, not an error.
func (p *Pool) Reconcile(ctx context.Context) ([]Change, error) {
	p.mu.Lock()
	es := p.sorted()
	p.mu.Unlock()
	return p.rehash(ctx, es)
}

// rehash compares each of es with the workspace.
func (p *Pool) rehash(ctx context.Context, es []Entry) ([]Change, error) {
	if err := p.acquire(); err != nil {
		return nil, err
	}
	defer p.release()
	var changes []Change
	for _, e := range es {
		now, bad, err := look(ctx, p.root, e.Path)
		if err != nil {
			return nil, err
		}
		if c, ok := diff(e, now, bad); ok {
			changes = append(changes, c)
		}
	}
	return changes, nil
}

// Accept makes the record agree with changes the agent has been told
// about, so they are not reported again. An entry the agent has recorded
// anew since the change was found, and an Unreadable change, are left as
// they are. An accepted entry keeps the round, call and op of the agent's
// last sighting and is marked Outside. Accept returns how many entries it
// changed.
func (p *Pool) Accept(changes []Change) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range changes {
		e, ok := p.entries[c.Path]
		if !ok || c.Kind == Unreadable || e.Version() != c.Was.Version() {
			continue
		}
		e.Exists, e.Hash, e.Size, e.Outside = c.Now.Exists, c.Now.Hash, c.Now.Size, true
		p.entries[c.Path] = e
		n++
	}
	return n
}

// maxSummaryLines bounds Summary, so that a mass change outside does not
// flood the model's context.
const maxSummaryLines = 20

// Summary renders changes as a short note for the model and the user, one
// line a path:
//
//	notes.md was modified outside the agent (291 → 340 bytes).
//
// It is empty when there are no changes.
func Summary(changes []Change) string {
	var b strings.Builder
	for i, c := range changes {
		if i == maxSummaryLines {
			fmt.Fprintf(&b, "… and %s changed outside the agent.\n", plural.Count(len(changes)-i, "more file", "more files"))
			break
		}
		b.WriteString(c.String())
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// String is the change as one sentence.
func (c Change) String() string {
	switch c.Kind {
	case Modified:
		if c.Was.Size == c.Now.Size {
			return fmt.Sprintf("%s was modified outside the agent (%s, new content).", c.Path, plural.Count(c.Now.Size, "byte"))
		}
		return fmt.Sprintf("%s was modified outside the agent (%d → %s).", c.Path, c.Was.Size, plural.Count(c.Now.Size, "byte"))
	case Deleted:
		return fmt.Sprintf("%s was deleted outside the agent.", c.Path)
	case Created:
		return fmt.Sprintf("%s was created outside the agent (%s).", c.Path, plural.Count(c.Now.Size, "byte"))
	}
	return fmt.Sprintf("%s was replaced outside the agent by something a tool cannot read (%s).", c.Path, c.Reason)
}
