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
// when that run has ended (or ctx ends). A last line cut short, as a
// crash leaves it, is skipped.
//
// An agent that Inspect refuses (its files damaged, cut below what was
// committed, of a newer schema) is refused here too, with Inspect's
// error, before any event is given: the history is a file of its own,
// readable when the journal is not, and `cairn events` and the web view
// must not show it for an agent `cairn show` refuses.
//
// It does not decode the agent's state: whether the agent exists is asked
// of the store with Exists, whether it can be read with
// checkpoint.Checker (a pass over its files in a fixed buffer; only a
// store without it pays a Read), and whether its run goes on, at each
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
			if err := playLine(bytes.TrimSuffix(partial, []byte("\n")), fn); err != nil {
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

func playLine(line []byte, fn func(Event, []byte) error) error {
	var e Event
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	return fn(e, line)
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
