package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
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
// the SDK reads them.
type events struct {
	br    *bufio.Reader
	limit int
	out   queue
}

func (e *events) Read(p []byte) (int, error) { return e.out.read(p, e.event) }

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
			return ev.end(line, e.limit), err
		default:
			ev.add(line, e.limit)
		}
		if err != nil {
			return ev.end(nil, e.limit), err
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
// its place, ended by a blank line.
func (ev *event) end(blank []byte, limit int) []byte {
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
		if answer := dropAnswer(&ev.msg, ev.size, limit); answer != nil {
			out = append(append(append(out, "data: "...), answer...), '\n')
		}
	}
	return append(out, '\n')
}
