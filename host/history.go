package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// A followed history is read again for new lines followPoll after its
// last line, then less often while nothing comes, down to once every
// followIdle: many followers of quiet agents (a web view left open) then
// cost little, and a busy agent's lines still come within followPoll.
const (
	followPoll = 100 * time.Millisecond
	followIdle = time.Second
)

// ReadHistory plays back an agent's event history: every event its runs
// emitted, in order, as the JSON line `--json` printed and decoded. With
// follow it keeps reading while a process runs the agent, and returns
// when that run has ended (or ctx ends). A last line cut short (no
// newline yet), as a crash while it is written leaves it, is skipped
// quietly; a follower waits for the rest of it. A whole line that is not
// an event is not skipped quietly: fn is given, in its place, a warning
// that names the history's file (where the store has one) and the line,
// and says why (see Event.Skipped), so that a playback says what it
// leaves out and its lines keep their numbers.
//
// An agent that Inspect refuses (its files damaged, cut below what was
// committed, of a newer schema) is refused here too, with Inspect's
// error, before any event is given: the history is a file of its own,
// readable when the journal is not, and `cairn events` and the web view
// must not show it for an agent `cairn show` refuses.
//
// It does not decode the agent's state: whether the agent exists is asked
// of the store with Exists, whether it can be read with
// checkpoint.Checker (a pass over its files, or its rows, in a bounded
// buffer; every store of cairn's has it, and only a store without it
// pays a Read), and whether its run goes on, at each
// poll, with checkpoint.LockQuery (only a store without it pays a
// Summary), so that a playback or a follower costs memory for the history
// it reads, whatever the size of the agent's state.
//
// # Errors
//
// checkpoint.ErrInvalidID for an id that cannot be an agent's;
// checkpoint.ErrNotFound for an unknown agent (one that exists but has
// never run, a fork, has no events and no error); the store's error for
// one that cannot be read, as Inspect returns it (a
// *checkpoint.CorruptError, one matching checkpoint.ErrLost or
// checkpoint.ErrFutureSchema); what fn returns.
func ReadHistory(ctx context.Context, store checkpoint.Store, id string, follow bool,
	fn func(e Event, line []byte) error) error {
	if err := usable(store); err != nil {
		return err
	}
	if fn == nil {
		return errors.New("read the event history: no function to give the events to")
	}
	if err := checkpoint.CheckID(id); err != nil {
		return err
	}
	if !store.Exists(id) {
		return fmt.Errorf("agent %q: %w", id, checkpoint.ErrNotFound)
	}
	if err := readable(store, id); err != nil {
		return err
	}
	rc, err := store.ReadEvents(id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil // an agent made by fork or import, not run yet: no events
	}
	if err != nil {
		return err
	}
	defer func() { rc.Close() }()
	p := playback{fn: fn, agent: id, where: historyName(rc, id)}
	r := bufio.NewReader(rc)
	var partial []byte
	var read int64  // bytes of the history read so far
	last := !follow // the run has ended: read to the end once more, then stop
	wait := followPoll
	for {
		line, err := r.ReadBytes('\n')
		read += int64(len(line))
		partial = append(partial, line...)
		if len(line) > 0 {
			wait = followPoll
		}
		if err == nil {
			if err := p.line(bytes.TrimSuffix(partial, []byte("\n"))); err != nil {
				return err
			}
			partial = nil
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("read event history of agent %q: %w", id, err)
		}
		if last {
			return nil
		}
		last = !running(store, id)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, followIdle)
		if from, ok := store.(checkpoint.EventsFrom); ok {
			// This store's reader was a copy: read what came since.
			more, err := from.ReadEventsFrom(id, read)
			if err != nil {
				return fmt.Errorf("follow event history of agent %q: %w", id, err)
			}
			rc.Close()
			rc, r = more, bufio.NewReader(more)
		}
	}
}

// readable returns the error Read gives for agent id, or nil where Read
// would read it: checkpoint.Checker's, without decoding the state, where
// the store is one.
func readable(store checkpoint.Store, id string) error {
	if c, ok := store.(checkpoint.Checker); ok {
		return c.Check(id)
	}
	_, err := store.Read(id)
	return err
}

// historyName names agent id's history in a warning: its file, where the
// store reads one, as FileStore does.
func historyName(rc io.ReadCloser, id string) string {
	if f, ok := rc.(interface{ Name() string }); ok {
		return f.Name()
	}
	return fmt.Sprintf("the event history of agent %s", id)
}

// playback gives the lines of an agent's history to fn, counting them.
type playback struct {
	fn    func(Event, []byte) error
	agent string
	where string    // the history, as a warning names it
	n     int       // the lines given so far
	last  time.Time // the time of the last event given
}

// line gives fn the event of one whole line of the history, or, for a
// line that is not one, a warning in its place, of the time of the event
// before it, so that a playback gives the same lines each time.
func (p *playback) line(line []byte) error {
	p.n++
	var e Event
	err := json.Unmarshal(line, &e)
	if err == nil && e.Type != "" {
		p.last = e.Time
		return p.fn(e, line)
	}
	if err == nil {
		err = errors.New("it has no type")
	}
	w := Event{Type: EventWarning, Time: p.last, Agent: p.agent,
		Text: fmt.Sprintf("%s, line %d, is not an event and is left out: %v", p.where, p.n, err)}
	b, err := json.Marshal(&w)
	if err != nil {
		return err
	}
	return p.fn(w, b)
}

// running says whether a process runs the agent, for a follower to know
// when to stop. It asks the store's lock (checkpoint.LockQuery) and
// reads no state; only a store that cannot be asked so pays a Summary.
func running(store checkpoint.Store, id string) bool {
	if q, ok := store.(checkpoint.LockQuery); ok {
		locked, err := q.Locked(id)
		return err == nil && locked
	}
	s, err := store.Summary(id)
	return err == nil && s.Locked
}
