package mcp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioMessage bounds one message a client sends on stdio: the SDK's
// own bound, which ends the session at a longer message. Lines are read
// here first, and a longer one is answered with an error while the
// session goes on, as over HTTP a body too large is refused with 413.
const maxStdioMessage = sdk.DefaultMaxLineLength

// tooLargeCode is JSON-RPC's "invalid request".
const tooLargeCode = -32600

// lineLimiter passes a client's messages, one line each, to the SDK, and
// answers a line longer than max on w itself, naming the request's id
// when it has one, instead of passing it on.
type lineLimiter struct {
	br      *bufio.Reader
	max     int
	w       io.Writer
	pending []byte // the rest of the line being read out
	err     error  // what ended the input, once pending is read out
}

func newLineLimiter(r io.Reader, w io.Writer, max int) *lineLimiter {
	return &lineLimiter{br: bufio.NewReaderSize(r, 64<<10), max: max, w: w}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		l.pending, l.err = l.line()
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// line reads the next line, whole; a line over max is answered and
// skipped, and nil returned for it.
func (l *lineLimiter) line() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > l.max {
			return nil, l.refuse(line, err)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// refuse reads the rest of a line that began with head, past max, finding
// its request's id, and answers it.
func (l *lineLimiter) refuse(head []byte, err error) error {
	var s idScanner
	s.feed(head)
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = l.br.ReadSlice('\n')
		s.feed(chunk)
	}
	id := json.RawMessage("null")
	if s.found && json.Valid(s.id) {
		id = s.id
	}
	msg := fmt.Sprintf("message of more than %d bytes: a client sends at most that on stdio (a file that large is better written by a tool from the workspace)", l.max)
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": tooLargeCode, "message": msg}})
	if _, werr := l.w.Write(append(answer, '\n')); werr != nil && err == nil {
		err = werr
	}
	return err
}

// idScanner finds, in JSON read a piece at a time, the raw value of the
// top-level object's "id" member, keeping nothing else: a message too
// large to hold still gets its answer.
type idScanner struct {
	depth                int
	inStr, esc           bool
	expectKey, keyStr    bool // a key comes next; the string being read is one
	keyIsID, wantValue   bool // the last key was "id"; its value comes next
	capture, found, gone bool // reading the id; read; given up
	key, id              []byte
}

func (s *idScanner) feed(b []byte) {
	for _, c := range b {
		if s.found || s.gone {
			return
		}
		s.step(c)
	}
}

func (s *idScanner) step(c byte) {
	if s.inStr {
		s.stringByte(c)
		return
	}
	if s.capture { // a number or null
		if c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			s.found = true
			return
		}
		s.keep(c)
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
	case ':':
		s.wantValue, s.keyIsID = s.depth == 1 && s.keyIsID, false
	case '"':
		s.inStr = true
		switch {
		case s.depth == 1 && s.expectKey:
			s.keyStr, s.expectKey, s.key = true, false, s.key[:0]
		case s.depth == 1 && s.wantValue:
			s.capture, s.wantValue = true, false
			s.keep(c)
		}
	case ' ', '\t', '\r', '\n':
	default:
		if s.depth == 1 && s.wantValue {
			s.capture, s.wantValue = true, false
			s.keep(c)
		}
	}
}

// stringByte reads a byte of a string: of the id, of a key, or of
// anything else.
func (s *idScanner) stringByte(c byte) {
	switch {
	case s.capture:
		s.keep(c)
	case s.keyStr && len(s.key) < 4:
		s.key = append(s.key, c)
	}
	switch {
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		s.inStr = false
		if s.capture {
			s.found = true
		} else if s.keyStr {
			s.keyIsID, s.keyStr = string(s.key) == `id"`, false
		}
	}
}

// keep adds c to the id, giving up on an id too long to be one.
func (s *idScanner) keep(c byte) {
	if s.id = append(s.id, c); len(s.id) > 256 {
		s.gone = true
	}
}

// lockedWriter serialises the SDK's messages and lineLimiter's answers,
// each one Write of a whole line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
