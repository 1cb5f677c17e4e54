package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// dropCode is the code of the error response that frames puts in the
// place of an answer too large to read: one of JSON-RPC's codes for an
// implementation's own errors.
const dropCode = -32090

// frames passes on a server's stdout a line at a time (a stdio server
// writes one JSON-RPC message a line), each held until it is whole, up
// to limit bytes. A longer line is read to its end without being kept: a
// response is replaced by an error response (dropCode) to its request
// that says how large it was, and a batch by one to each of the client's
// requests it answers (asked, see stdiobatch.go); anything else (a
// request or notification of the server's) is dropped.
type frames struct {
	br    *bufio.Reader
	limit int
	asked *asked // the client's requests, for a batch over limit; nil for none
	out   queue
}

func (f *frames) Read(p []byte) (int, error) { return f.out.read(p, f.line) }

// queue is what a filter has read and not yet passed on.
type queue struct {
	pending []byte // the rest of the piece being read out
	err     error  // what ended the input, once pending is read out
}

// read gives p what is pending, taking the next piece from next once it
// is read out, until next's error.
func (q *queue) read(p []byte, next func() ([]byte, error)) (int, error) {
	for len(q.pending) == 0 {
		if q.err != nil {
			return 0, q.err
		}
		q.pending, q.err = next()
	}
	n := copy(p, q.pending)
	q.pending = q.pending[n:]
	return n, nil
}

// line reads the next line, whole, or, for one over limit, finds
// whether it is a response and to which request, and returns the error
// response that replaces it, or nothing; for a batch, the error response
// to each of the client's requests it answers (see stdiobatch.go).
func (f *frames) line() ([]byte, error) {
	var s messageScan
	line, size, err := readLine(f.br, f.limit, s.feed)
	if size == 0 {
		return line, err
	}
	if answer := dropAnswer(&s, size, f.limit); answer != nil {
		return append(answer, '\n'), err
	}
	return f.asked.dropBatchLines(&s, size, f.limit), err
}

// dropAnswer is the error response (dropCode) that takes the place of a
// message of size bytes, over limit, s having read it: nil for anything
// but a response to a request.
func dropAnswer(s *messageScan, size, limit int) []byte {
	if !s.id.found || !json.Valid(s.id.id) || string(s.id.id) == "null" || s.method.found {
		return nil
	}
	msg := fmt.Sprintf("its answer of %d bytes passed the %d bytes cairn reads of one", size, limit)
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(s.id.id),
		"error": map[string]any{"code": dropCode, "message": msg}})
	return answer
}

// dropBatch is the error response (dropCode) to the request of id that
// takes the place of a JSON-RPC batch of size bytes, over limit, that
// answers it, s having read it: nil for anything but a batch, or a
// request that awaits no answer.
func dropBatch(s *messageScan, id json.RawMessage, size, limit int) []byte {
	if s.lead != '[' || id == nil {
		return nil
	}
	return errorAnswer(id, dropCode, fmt.Sprintf("its answer, a JSON-RPC batch of %d bytes, passed the %d bytes cairn reads of one", size, limit))
}

// readLine reads the next line from br, whole, with its newline. A line
// longer than max is read to its end a chunk at a time, each chunk given
// to over and none kept: readLine then returns no line and the line's
// size (zero for a line it returns).
func readLine(br *bufio.Reader, max int, over func(chunk []byte)) (line []byte, size int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			over(line)
			size := len(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				over(chunk)
				size += len(chunk)
			}
			return nil, size, err
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, 0, err
		}
	}
}

// messageScan finds, in a JSON-RPC message read a piece at a time
// without being kept, its id and whether it has a method, and whether it
// is a batch (a JSON array).
type messageScan struct {
	id     idScanner
	method methodScanner
	lead   byte      // its first byte but white space; 0 before it
	batch  batchScan // its members, if it is a batch
}

func (s *messageScan) feed(b []byte) {
	if s.lead == 0 {
		if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 {
			s.lead = t[0]
		}
	}
	s.id.feed(b)
	s.method.feed(b)
	if s.lead == '[' {
		s.batch.feed(b)
	}
}

func (s *messageScan) Write(b []byte) (int, error) {
	s.feed(b)
	return len(b), nil
}

// methodScanner finds, in JSON read a piece at a time, whether the
// top-level object has a "method" member: a request or notification, not
// a response.
type methodScanner struct {
	depth                    int
	inStr, esc               bool
	expectKey, keyStr, found bool
	key                      []byte
}

func (s *methodScanner) feed(b []byte) {
	for _, c := range b {
		if s.found {
			return
		}
		s.step(c)
	}
}

func (s *methodScanner) step(c byte) {
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
			s.found = s.keyStr && string(s.key) == "method"
			s.keyStr = false
			return
		}
		if s.keyStr && len(s.key) <= len("method") {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case '{', '[':
		s.depth++
		s.expectKey = c == '{' && s.depth == 1
	case '}', ']':
		s.depth--
	case ',':
		s.expectKey = s.depth == 1
	case '"':
		s.inStr = true
		s.keyStr, s.expectKey = s.depth == 1 && s.expectKey, false
		s.key = s.key[:0]
	}
}
