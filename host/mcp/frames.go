package mcp

import (
	"bufio"
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
// that says how large it was; anything else (a request or notification
// of the server's) is dropped.
type frames struct {
	br      *bufio.Reader
	limit   int
	pending []byte // the rest of the line being read out
	err     error  // what ended the input, once pending is read out
}

func (f *frames) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending, f.err = f.line()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// line reads the next line, whole, or, for one over limit, finds
// whether it is a response and to which request, and returns the error
// response that replaces it, or nothing.
func (f *frames) line() ([]byte, error) {
	var id idScanner
	var m methodScanner
	line, size, err := readLine(f.br, f.limit, func(chunk []byte) {
		id.feed(chunk)
		m.feed(chunk)
	})
	if size == 0 {
		return line, err
	}
	if !id.found || !json.Valid(id.id) || string(id.id) == "null" || m.found {
		return nil, err
	}
	msg := fmt.Sprintf("its answer of %d bytes passed the %d bytes cairn reads of one", size, f.limit)
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id.id),
		"error": map[string]any{"code": dropCode, "message": msg}})
	return append(answer, '\n'), err
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
