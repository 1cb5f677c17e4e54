package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
// leaves out and its lines keep their numbers. A follower across `cairn
// gc --keep-rounds`, which rewrites the history, goes on by the lines'
// numbers, which the trim keeps (see follower.readOn): it neither loses
// nor repeats a line, and lines removed before it read them come as the
// trim's warning. A follower of an agent that has no history yet, while
// a process runs it (on PostgreSQL a run's first lines wait for its
// first sync), waits for its lines.
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
	return ReadHistoryReady(ctx, store, id, follow, nil, fn)
}

// ReadHistoryReady is ReadHistory that calls ready, when it is not nil,
// once the agent has been checked and its history opened, before the
// first event: a server that answers with a stream sends its header
// then, so that a follower who has read every line has an answer while
// it waits for the next one, and an agent ReadHistory refuses is still
// refused before the answer begins. It is not called when ReadHistory
// fails before that, nor for an agent with no history that nothing runs.
func ReadHistoryReady(ctx context.Context, store checkpoint.Store, id string, follow bool,
	ready func(), fn func(e Event, line []byte) error) error {
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
	none := errors.Is(err, checkpoint.ErrNotFound)
	if none && (!follow || !running(store, id)) {
		return nil // an agent made by fork or import, not run yet: no events
	}
	if none {
		// A run whose first lines wait for its first sync (PostgreSQL
		// writes them with it): followed from nothing.
		rc, err = noHistory(), nil
	}
	if err != nil {
		return err
	}
	if ready != nil {
		ready()
	}
	p := playback{fn: fn, agent: id, where: historyName(rc, id)}
	f := &follower{store: store, id: id, rc: rc, r: bufio.NewReader(rc), none: none}
	defer func() { f.rc.Close() }()
	last := !follow // the run has ended: read to the end once more, then stop
	wait := followPoll
	for {
		line, err := f.r.ReadBytes('\n')
		f.read += int64(len(line))
		f.partial = append(f.partial, line...)
		if len(line) > 0 {
			wait = followPoll
		}
		if err == nil {
			f.last, f.partial = f.partial, nil
			if err := p.line(bytes.TrimSuffix(f.last, []byte("\n"))); err != nil {
				return err
			}
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
		if err := f.readOn(&p); err != nil {
			return fmt.Errorf("follow event history of agent %q: %w", id, err)
		}
	}
}

// follower is where a follower of an agent's history is in it: the
// reader it reads, the bytes it has read of it, the last whole line of
// them, and the bytes after it, of a line not yet whole.
type follower struct {
	store         checkpoint.Store
	id            string
	rc            io.ReadCloser
	r             *bufio.Reader
	read          int64
	last, partial []byte
	none          bool // the history was not there: rc holds nothing
}

// noHistory is the reader of a history that is not there yet.
func noHistory() io.ReadCloser { return io.NopCloser(bytes.NewReader(nil)) }

// lastChecked is how much of the last whole line read, at most, a
// follower reads again to check that it is still where it was: the whole
// of a line of the usual size, time and all, and of a long one (a call's
// output) its end, so that a look costs little more than what is new.
const lastChecked = 4096

// readOn makes the follower read what the history gained since it
// reached its reader's end. A store whose reader is a copy
// (checkpoint.EventsFrom) is asked from the start of the last whole line
// read (of its last lastChecked bytes), and the follower reads on where
// that line is still there; a file read on as it grows is read on,
// unless another file now holds the history. Where the history was
// rewritten (`cairn gc --keep-rounds` trims it, and moves every line
// kept; an import replaces it), the follower reads it again from its
// start, and p gives only the lines after the last it gave, by their
// numbers, which a trim keeps: lines a trim removed before they were
// read come as its warning.
func (f *follower) readOn(p *playback) error {
	if from, ok := f.store.(checkpoint.EventsFrom); ok {
		tail := f.last[max(0, len(f.last)-lastChecked):]
		at := f.read - int64(len(f.partial)) - int64(len(tail))
		more, err := from.ReadEventsFrom(f.id, at)
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			return err
		}
		if err == nil {
			has := make([]byte, len(tail))
			if _, err := io.ReadFull(more, has); err == nil && bytes.Equal(has, tail) {
				f.rc.Close()
				f.rc, f.r = more, bufio.NewReader(more)
				f.read, f.partial = at+int64(len(tail)), nil
				return nil
			}
			more.Close()
		}
		return f.again(p)
	}
	if f.none || replaced(f.rc) {
		return f.again(p)
	}
	return nil
}

// again reads the history again from its start.
func (f *follower) again(p *playback) error {
	rc, err := f.store.ReadEvents(f.id)
	f.none = errors.Is(err, checkpoint.ErrNotFound)
	if f.none {
		rc, err = noHistory(), nil
	}
	if err != nil {
		return err
	}
	f.rc.Close()
	f.rc, f.r = rc, bufio.NewReader(rc)
	p.where = historyName(rc, f.id)
	f.read, f.last, f.partial = 0, nil, nil
	p.n, p.num = 0, 0
	return nil
}

// replaced says whether rc is a file that no longer holds the history it
// was opened as: another file was renamed over its name, or it was
// removed.
func replaced(rc io.ReadCloser) bool {
	f, ok := rc.(interface {
		Name() string
		Stat() (fs.FileInfo, error)
	})
	if !ok {
		return false
	}
	have, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(f.Name())
	return err != nil || !os.SameFile(have, now)
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
	n     int       // the lines of the history read so far
	last  time.Time // the time of the last event given
	// num is the number of the line read last, which a trim's warning
	// sets to the lines it stands for (Event.Removed), so that a line
	// keeps its number across a trim; given is the number of the last
	// line given. A history read again gives only the lines after it.
	num, given int64
}

// line gives fn the event of one whole line of the history, or, for a
// line that is not one, a warning in its place, of the time of the event
// before it, so that a playback gives the same lines each time.
func (p *playback) line(line []byte) error {
	p.n++
	p.num++
	var e Event
	err := json.Unmarshal(line, &e)
	if err == nil && e.Trimmed() {
		p.num = e.Removed
	}
	if p.num <= p.given {
		return nil // given before the history was read again
	}
	p.given = p.num
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
