package model

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// maxSSELine bounds one line of a stream, so that a server cannot make the
// host buffer without end.
const maxSSELine = 8 << 20

// errStreamCut reports a stream that ended before the model finished its
// turn. It is retried like a dropped connection.
var errStreamCut = errors.New("the stream ended before the turn did")

// sseEvent is one server-sent event: its type (the `event:` field, empty
// when absent) and its data lines joined by newlines.
type sseEvent struct {
	Name string
	Data []byte
}

// sseReader reads server-sent events (the text/event-stream format of the
// HTML standard): lines ended by LF or CRLF, `field: value`, events ended by
// a blank line, comments starting with a colon. The id and retry fields are
// ignored.
//
// Comments are a server's keep-alives: they carry nothing, so when r
// bounds the server's silence (an idleReader), a stretch of nothing but
// comments as long as that bound ends the stream as silence would.
type sseReader struct {
	sc   *bufio.Scanner
	name string
	data []byte
	has  bool // data was seen for the event being read

	quiet     time.Duration // the longest stretch of comments alone; 0: no bound
	lastEvent time.Time     // when the stream began or an event came
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSELine)
	sr := &sseReader{sc: sc, lastEvent: time.Now()}
	if ir, ok := r.(*idleReader); ok {
		sr.quiet = ir.d
	}
	return sr
}

// Next returns the next event.
//
// # Errors
//
// io.EOF when the stream ends; an event cut off by the end of the stream is
// dropped, as the standard says. An error wrapping ErrTooLarge for a line
// longer than maxSSELine; a retryable *timeoutError when the server sent
// only comments for the reader's bound on silence; the error of the
// underlying reader.
func (r *sseReader) Next() (sseEvent, error) {
	for r.sc.Scan() {
		line := bytes.TrimSuffix(r.sc.Bytes(), []byte("\r"))
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				r.lastEvent = time.Now()
				return ev, nil
			}
			continue
		}
		if line[0] == ':' && r.quiet > 0 && time.Since(r.lastEvent) >= r.quiet {
			return sseEvent{}, retryable(&timeoutError{d: r.quiet, started: true, keepAlive: true})
		}
		r.field(line)
	}
	switch err := r.sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return sseEvent{}, fmt.Errorf("%w: a line of the event stream is longer than %d MiB, the most cairn reads", ErrTooLarge, maxSSELine>>20)
	case err != nil:
		return sseEvent{}, fmt.Errorf("read event stream: %w", err)
	}
	return sseEvent{}, io.EOF
}

func (r *sseReader) field(line []byte) {
	if line[0] == ':' {
		return
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "event":
		r.name = string(value)
	case "data":
		if r.has {
			r.data = append(r.data, '\n')
		}
		r.data, r.has = append(r.data, value...), true
	}
}

func (r *sseReader) dispatch() (sseEvent, bool) {
	ev := sseEvent{Name: r.name, Data: r.data}
	ok := r.has
	r.name, r.data, r.has = "", nil, false
	return ev, ok
}
