package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// events passes on a url server's stream of server-sent events (each
// event's data a JSON-RPC message) an event at a time, each held until
// it is whole, up to limit bytes. A longer event is read to its end
// without its data being kept, as frames reads a longer line: a response
// is replaced by an event of an error response (dropCode) to its request
// that says how large it was; of anything else (a request or
// notification of the server's, an event of another name) nothing but
// its id and retry lines passes on, so that a stream resumed after it
// starts after it. A line ends at "\n", and an event at a blank line, as
// the SDK reads them. An event whose data is a JSON-RPC batch, which the
// SDK does not read, passes on as an event of each member (see split).
//
// The stream of a POST whose request awaits an answer, req, that ends or
// fails before the answer came, none of its events having an id to resume
// it by, ends with an event of an error response (cutCode) that says so,
// where the SDK's client would fail the call with "request terminated
// without response" alone.
type events struct {
	br    *bufio.Reader
	limit int
	req   *http.Request
	out   queue

	id        json.RawMessage // of req's request, once read; nil for none
	idRead    bool
	answered  bool // an event answered req's request
	resumable bool // an event had an id
	n         int  // events passed on
}

func (e *events) Read(p []byte) (int, error) { return e.out.read(p, e.next) }

// next is the next event, as event reads it, and, at the end of the
// stream, the answer that takes the place of one that never came.
func (e *events) next() ([]byte, error) {
	ev, err := e.event()
	var out []byte
	for _, one := range e.split(ev) {
		if other := e.note(one); other != nil {
			one = append(append([]byte("data: "), other...), "\n\n"...)
		}
		out = append(out, one...)
	}
	ev = out
	if err == nil || e.answered || e.resumable || e.req == nil || e.req.Context().Err() != nil {
		return ev, err
	}
	if !e.idRead {
		e.id, e.idRead = requestID(e.req), true
	}
	if e.id == nil {
		return ev, err
	}
	msg := fmt.Sprintf("the server ended its stream of events after %d of them, without the call's answer", e.n)
	if !errors.Is(err, io.EOF) {
		msg = fmt.Sprintf("the server's stream of events failed after %d of them, without the call's answer (%v)", e.n, err)
	}
	if len(ev) > 0 && !bytes.HasSuffix(ev, []byte("\n\n")) {
		ev = append(ev, '\n')
	}
	ev = append(append(append(ev, "data: "...), errorAnswer(e.id, cutCode, msg)...), "\n\n"...)
	return ev, io.EOF
}

// split is what passes on of ev, an event whole within the limit, as
// events: ev itself, but for an event whose data is a JSON-RPC batch (a
// JSON array), which the SDK's client fails on, ending the connection:
// then each member in an event of its own, the last with ev's id and
// retry lines, but a response to another request than req's, let go as
// a JSON body's other members are, and the answer to req's with its id
// spelled as req's (see batchAnswer).
func (e *events) split(ev []byte) [][]byte {
	var fields, data [][]byte
	for line := range bytes.Lines(ev) {
		name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		switch string(name) {
		case "data":
			data = append(data, bytes.TrimPrefix(value, []byte(" ")))
		case "id", "retry":
			fields = append(fields, append(bytes.Clone(bytes.TrimRight(line, "\r\n")), '\n'))
		case "event":
			if v := string(bytes.TrimPrefix(value, []byte(" "))); v != "" && v != "message" {
				return [][]byte{ev}
			}
		}
	}
	if !startsBatch(data) {
		return [][]byte{ev}
	}
	members, ok := batchOf(bytes.Join(data, []byte("\n")))
	if !ok {
		return [][]byte{ev}
	}
	id := e.requestID()
	var out [][]byte
	for _, m := range members {
		if of, ok := responseID(m); ok && id != nil {
			if !sameID(of, id) {
				continue
			}
			m = respelled(m, of, id)
		}
		var b bytes.Buffer
		b.WriteString("data: ")
		json.Compact(&b, m)
		b.WriteString("\n\n")
		out = append(out, b.Bytes())
	}
	if len(fields) > 0 {
		last := append(bytes.Join(fields, nil), '\n')
		if len(out) > 0 {
			last = append(last[:len(last)-1], out[len(out)-1]...)
			out = out[:len(out)-1]
		}
		out = append(out, last)
	}
	return out
}

// startsBatch reports whether data, an event's data lines, begins as a
// JSON array does, so that an event of anything else is not joined again.
func startsBatch(data [][]byte) bool {
	for _, d := range data {
		if d = bytes.TrimSpace(d); len(d) > 0 {
			return d[0] == '['
		}
	}
	return false
}

// requestID is the id of req's request; nil for none.
func (e *events) requestID() json.RawMessage {
	if !e.idRead && e.req != nil {
		e.id, e.idRead = requestID(e.req), true
	}
	return e.id
}

// note reads what passes on of an event, ev: whether it has an id, and
// whether it answers req's request; for a response to another request,
// the error response to req's that takes its place (see misanswered).
func (e *events) note(ev []byte) []byte {
	if len(bytes.TrimSpace(ev)) == 0 {
		return nil
	}
	var data [][]byte
	for line := range bytes.Lines(ev) {
		name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		switch string(name) {
		case "id":
			e.resumable = e.resumable || len(bytes.TrimSpace(value)) > 0
		case "data":
			data = append(data, bytes.TrimPrefix(value, []byte(" ")))
		}
	}
	var m struct {
		ID     json.RawMessage
		Method *string
	}
	if len(data) > 0 {
		e.n++ // not a comment alone (a keep-alive)
	}
	msg := bytes.Join(data, []byte("\n"))
	if e.answered || e.req == nil || json.Unmarshal(msg, &m) != nil || m.Method != nil || m.ID == nil {
		return nil
	}
	if !e.idRead {
		e.id, e.idRead = requestID(e.req), true
	}
	e.answered = e.id != nil
	if e.id == nil || sameID(m.ID, e.id) {
		return nil
	}
	return misanswered(e.req, msg)
}

// event reads the next event with the blank line that ends it, whole, or,
// for one over limit, what takes its place. An event the end of the
// stream cuts short is passed on as it is (the SDK takes it); one an
// error cuts short is dropped (the SDK drops it).
func (e *events) event() ([]byte, error) {
	var ev event
	for {
		line, size, err := readLine(e.br, e.limit, ev.longLine)
		switch {
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		case size > 0:
			ev.size += size
			ev.inLine = false
		case len(line) > 0 && len(bytes.TrimRight(line, "\r\n")) == 0:
			return ev.end(line, e.limit, e.requestID), err
		default:
			ev.add(line, e.limit)
		}
		if err != nil {
			return ev.end(nil, e.limit, e.requestID), err
		}
	}
}

// event is an event being read: its lines while it is within the limit;
// past it, its last id, retry and event fields and what its data says of
// its message.
type event struct {
	kept      []byte // its lines, while within the limit
	size      int    // its bytes so far
	over      bool   // past the limit: kept is dropped
	id, retry []byte // its last id and retry lines, once over
	name      string // its last event field's value, once over
	msg       messageScan
	data      bool // a data line was read (the next is joined with "\n")
	inLine    bool // a line over the limit is being read
	dataLine  bool // ... and it is a data line
}

// add adds a line within the limit.
func (ev *event) add(line []byte, limit int) {
	ev.size += len(line)
	if !ev.over && len(ev.kept)+len(line) <= limit {
		ev.kept = append(ev.kept, line...)
		return
	}
	ev.drop()
	ev.field(line)
}

// drop turns the lines kept into the fields kept of an event over the
// limit.
func (ev *event) drop() {
	if ev.over {
		return
	}
	ev.over = true
	for line := range bytes.Lines(ev.kept) {
		ev.field(line)
	}
	ev.kept = nil
}

// field reads a whole line of an event over the limit.
func (ev *event) field(line []byte) {
	name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
	switch string(name) {
	case "id":
		ev.id = append(ev.id[:0], line...)
	case "retry":
		ev.retry = append(ev.retry[:0], line...)
	case "event":
		ev.name = string(bytes.TrimSpace(value))
	case "data":
		ev.feedData(value)
	}
}

// longLine reads a chunk of a line over the limit, the first one with
// its field's name.
func (ev *event) longLine(chunk []byte) {
	ev.drop()
	if ev.inLine {
		if ev.dataLine {
			ev.msg.feed(chunk)
		}
		return
	}
	ev.inLine = true
	name, value, _ := bytes.Cut(chunk, []byte(":"))
	if ev.dataLine = string(name) == "data"; ev.dataLine {
		ev.feedData(value)
	}
}

// feedData reads the value of a data field, joined to the ones before
// as the SDK joins them.
func (ev *event) feedData(value []byte) {
	if ev.data {
		ev.msg.feed([]byte("\n"))
	}
	ev.data = true
	ev.msg.feed(value)
}

// end is what passes on of the event, blank the line that ended it (nil
// at the end of the stream): the event itself, or, over the limit, its
// id and retry lines and, of a response, the error response that takes
// its place, ended by a blank line; of a batch, the error response to
// the request whose id reqID gives (none, for nil) that takes its place
// (see dropBatch).
func (ev *event) end(blank []byte, limit int, reqID func() json.RawMessage) []byte {
	if !ev.over {
		return append(ev.kept, blank...)
	}
	var out []byte
	for _, line := range [][]byte{ev.id, ev.retry} {
		if len(line) > 0 {
			out = append(bytes.TrimRight(append(out, line...), "\r\n"), '\n')
		}
	}
	if ev.name == "" || ev.name == "message" {
		answer := dropAnswer(&ev.msg, ev.size, limit)
		if answer == nil && ev.msg.lead == '[' {
			answer = dropBatch(&ev.msg, reqID(), ev.size, limit)
		}
		if answer != nil {
			out = append(append(append(out, "data: "...), answer...), '\n')
		}
	}
	return append(out, '\n')
}
