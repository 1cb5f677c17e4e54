package host

import (
	"bytes"
	"encoding/json"
	"io"
)

// eventLine encodes events as lines of JSON into one buffer, which each
// event reuses: a run writes several events a round. Its bytes are
// json.Marshal's and a newline. While held, lines gather in the buffer
// and go to the history in one write when released. Not safe for
// concurrent use (the run's mutex guards it).
type eventLine struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	held bool
}

// write adds e's line to the history w, or to the lines held for it.
func (l *eventLine) write(e *Event, w io.Writer) {
	if l.encode(e) && !l.held {
		w.Write(l.buf.Bytes())
	}
	if !l.held {
		l.buf.Reset()
	}
}

// encode appends e's line to the buffer: appendEvent's bytes, or
// encoding/json's for an event appendEvent leaves to it. It reports false,
// and appends nothing, when e cannot be encoded: the history is best
// effort, and such an event is left out of it.
func (l *eventLine) encode(e *Event) bool {
	if b, ok := appendEvent(l.buf.AvailableBuffer(), e); ok {
		l.buf.Write(append(b, '\n'))
		return true
	}
	if l.enc == nil {
		l.enc = json.NewEncoder(&l.buf)
	}
	c := *e // only an event encoding/json writes is copied to the heap
	return l.enc.Encode(&c) == nil
}

// release writes the held lines to w in one write and stops holding.
func (l *eventLine) release(w io.Writer) {
	if l.held && l.buf.Len() > 0 {
		w.Write(l.buf.Bytes())
	}
	l.buf.Reset()
	l.held = false
}

// holdEvents gathers the history's lines of the events that follow until
// releaseEvents, which writes them at once: for the events a round's
// commit emits back to back. The caller hands each event over as usual.
func (r *run) holdEvents() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.line.held = true
}

// releaseEvents writes what holdEvents gathered.
func (r *run) releaseEvents() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.line.release(r.history)
}

// holdLater keeps the events emitted from now on until laterEvents: what
// resume applies for the interrupted round is told after agent_resumed,
// which says what it is, though it happens before.
func (r *run) holdLater() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.later = &[]Event{}
}

// laterEvents stops holding, emits first (when it has a type) and then,
// in order, the events held since holdLater.
func (r *run) laterEvents(first Event) {
	r.mu.Lock()
	held := r.later
	r.later = nil
	r.mu.Unlock()
	if first.Type != "" {
		r.emit(first)
	}
	if held == nil {
		return
	}
	for _, e := range *held {
		r.emitStamped(e)
	}
}
