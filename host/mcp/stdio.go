package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioMessage bounds one message a client sends on stdio: the SDK's
// own bound, which ends the session at a longer message. Lines are read
// here first, and a longer one is answered with an error while the
// session goes on, as over HTTP a body too large is refused with 413.
const maxStdioMessage = sdk.DefaultMaxLineLength

// tooLargeCode is JSON-RPC's "invalid request".
const tooLargeCode = jsonrpc.CodeInvalidRequest

// lineLimiter passes a client's messages, one line each, to the SDK, and
// answers a line longer than max on w itself, naming the request's id
// when it has one, instead of passing it on. With check set, it passes
// on what check makes of each line, and answers the lines check refuses.
//
// With drain set, the end of the input is passed on only once drain
// returns nothing: what it returns meanwhile is read as more lines.
type lineLimiter struct {
	br      *bufio.Reader
	max     int
	w       io.Writer
	check   func(line []byte) ([]byte, *refusal)
	drain   func() []byte
	pending []byte // the rest of the line being read out
	err     error  // what ended the input, once pending is read out
}

func newLineLimiter(r io.Reader, w io.Writer, max int) *lineLimiter {
	return &lineLimiter{br: bufio.NewReaderSize(r, 64<<10), max: max, w: w}
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			if l.drain != nil {
				if l.pending = l.drain(); len(l.pending) > 0 {
					continue
				}
			}
			return 0, l.err
		}
		l.pending, l.err = l.line()
		if l.check != nil && len(l.pending) > 0 {
			l.pending = l.checked(l.pending)
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// line reads the next line, whole; a line over max is answered, naming
// its request's id, and skipped, and nil returned for it.
func (l *lineLimiter) line() ([]byte, error) {
	var s idScanner
	line, size, err := readLine(l.br, l.max, s.feed)
	if size == 0 {
		return line, err
	}
	msg := fmt.Sprintf("message of more than %d bytes: a client sends at most that on stdio (a file that large is better written by a tool from the workspace)", l.max)
	if werr := l.answer(&refusal{id: s.requestID(), code: tooLargeCode, message: msg}); werr != nil && err == nil {
		err = werr
	}
	return nil, err
}

// checked is what check passes on of line: nil for a line it refuses,
// which is answered.
func (l *lineLimiter) checked(line []byte) []byte {
	msg, r := l.check(line)
	if r != nil {
		if err := l.answer(r); err != nil && l.err == nil {
			l.err = err
		}
	}
	return msg
}

// answer writes the JSON-RPC error response r, one line in one Write.
func (l *lineLimiter) answer(r *refusal) error {
	answer, _ := json.Marshal(errorResponse{Version: "2.0", ID: r.id, Error: jsonrpc.Error{Code: r.code, Message: r.message}})
	_, err := l.w.Write(append(answer, '\n'))
	return err
}

type errorResponse struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

// A refusal is the error a line is answered with instead of being passed
// on, and the id of the request it answers (null when none can be read).
type refusal struct {
	id      json.RawMessage
	code    int64
	message string
}

// A messageCheck finds, before the SDK reads them, the lines the SDK's
// stdio transport would end the session over: a line that is not JSON,
// not a JSON-RPC message (no "jsonrpc": "2.0", an id that is neither a
// string nor a number, no method and no id), or a batch the SDK does not
// take; and a request whose id is null, which the SDK would take for a
// notification and never answer. Such a line is refused, and answered
// with an error, as an HTTP body is; the session goes on. Each message
// passes on as one line, without the whitespace around it, which the SDK
// would take for trailing data.
//
// The SDK takes batches in a session of a protocol version before
// 2025-06-18 (which has none); a batch passes on there only if each of its
// messages is one, none is a notification, and no request id is used twice
// in it or was used in an earlier batch (the SDK ends the session over any
// of those, and never answers a batch with a notification in it).
//
// A request whose id is a number that is not an integer, or one too large
// to be read exactly, is refused too: the SDK would answer it with another
// id (1 for 1.5), and so is an initialize whose params the SDK cannot
// read (see paramsRefusal). With an exchange, x, a line x refuses is
// refused (see exchange).
type messageCheck struct {
	// batches reports whether the session takes batches, until the
	// initialize line is read (see version).
	batches func() bool
	// version is the protocol version the initialize line passed on asks
	// for: the SDK takes batches by it, and the lines after it are read
	// before the SDK has handled it.
	version  string
	batchIDs map[jsonrpc.ID]bool // the requests of earlier batches
	x        *exchange
}

// check returns the message line holds, to pass on, or why it is refused;
// nil and nil for a blank line.
func (c *messageCheck) check(line []byte) ([]byte, *refusal) {
	msg := bytes.Trim(line, " \t\r\n")
	if len(msg) == 0 {
		return nil, nil
	}
	if !json.Valid(msg) {
		err := json.Unmarshal(msg, new(json.RawMessage)) // for what is wrong
		return nil, &refusal{id: idOf(msg), code: jsonrpc.CodeParseError,
			message: fmt.Sprintf("parse error: %v (on stdio a client sends one JSON-RPC message a line)", err)}
	}
	if msg[0] == '[' {
		return c.batch(msg)
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, &refusal{id: idOf(msg), code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + err.Error()}
	}
	if req, ok := m.(*jsonrpc.Request); ok && !req.ID.IsValid() && nullID(msg) {
		// The SDK takes it for a notification, and answers nothing.
		return nil, &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeInvalidRequest,
			message: "invalid request: id null: a request's id is a string or a number (a notification has no id member)"}
	}
	if r := paramsRefusal(msg, m); r != nil {
		return nil, r
	}
	if r := c.admit(idOf(msg), []json.RawMessage{msg}, []jsonrpc.Message{m}); r != nil {
		return nil, r
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" && req.ID.IsValid() && c.version == "" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			c.version = p.ProtocolVersion
		}
	}
	return append(msg, '\n'), nil
}

// takesBatches reports whether the session takes batches: by the version
// its initialize asked for, once read.
func (c *messageCheck) takesBatches() bool {
	if c.version != "" {
		return versionTakesBatches(c.version)
	}
	return c.batches != nil && c.batches()
}

// admit refuses msgs, a line's messages (raws as sent), with id, if a
// request's id cannot be answered as it was sent, or the exchange refuses
// them; else they are in the exchange.
func (c *messageCheck) admit(id json.RawMessage, raws []json.RawMessage, msgs []jsonrpc.Message) *refusal {
	for i, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() {
			if why := idFault(idOf(raws[i])); why != "" {
				return &refusal{id: id, code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + why}
			}
		}
	}
	if c.x == nil {
		return nil
	}
	if why := c.x.admit(msgs); why != "" {
		return &refusal{id: id, code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + why}
	}
	return nil
}

// batch checks a batch, msg, which is valid JSON.
func (c *messageCheck) batch(msg []byte) ([]byte, *refusal) {
	invalid := func(why string) ([]byte, *refusal) {
		return nil, &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + why}
	}
	if !c.takesBatches() {
		return invalid(noBatches)
	}
	raws, msgs, why := batchMessages(msg)
	if why != "" {
		return invalid(why)
	}
	ids := map[jsonrpc.ID]bool{}
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		switch {
		case !ok:
		case !req.ID.IsValid():
			return invalid("a notification in a batch (send it on a line of its own)")
		case c.batchIDs[req.ID]:
			return invalid(fmt.Sprintf("request id %v used twice in batches", req.ID.Raw()))
		default:
			ids[req.ID] = true
		}
	}
	if r := c.admit(json.RawMessage("null"), raws, msgs); r != nil {
		return nil, r
	}
	if c.batchIDs == nil {
		c.batchIDs = map[jsonrpc.ID]bool{}
	}
	for id := range ids {
		c.batchIDs[id] = true
	}
	return append(msg, '\n'), nil
}

// noBatches is why a batch is refused in a session whose protocol
// version has none.
const noBatches = "a JSON-RPC batch: this session's protocol version has none (they ended with 2025-06-18)"

// batchMessages is the messages of msg, a batch (valid JSON), each as
// sent and decoded, or why it is no batch the SDK answers whole: empty,
// nested too deep, with a member that is no JSON-RPC message, a request
// whose id is null (taken for a notification, never answered) or cannot
// be answered as sent (1.5), or a request id twice in it (one answer for
// both).
func batchMessages(msg []byte) (raws []json.RawMessage, msgs []jsonrpc.Message, why string) {
	if err := json.Unmarshal(msg, &raws); err != nil || len(raws) == 0 {
		return nil, nil, "an empty batch"
	}
	if nesting(msg) > maxNesting {
		return nil, nil, fmt.Sprintf("a batch nested more than %d deep", maxNesting)
	}
	ids := map[jsonrpc.ID]bool{}
	msgs = make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, nil, "in a batch: " + err.Error()
		}
		msgs[i] = m
		req, ok := m.(*jsonrpc.Request)
		switch {
		case !ok:
		case !req.ID.IsValid() && nullID(raw):
			return nil, nil, "in a batch: id null: a request's id is a string or a number (a notification has no id member)"
		case !req.ID.IsValid():
		case ids[req.ID]:
			return nil, nil, fmt.Sprintf("request id %v twice in a batch", req.ID.Raw())
		default:
			ids[req.ID] = true
			if why := idFault(idOf(raw)); why != "" {
				return nil, nil, "in a batch: " + why
			}
		}
	}
	return raws, msgs, ""
}

// paramsRefusal refuses m, msg decoded, an initialize request whose
// params the SDK cannot read (null, a protocolVersion that is no string,
// capabilities that are no object), with invalid params, naming its id:
// the SDK answers it with code 0, no JSON-RPC code, where it answers
// another method's with -32602. Params left out are the SDK's to refuse
// (-32600). nil for any other message.
func paramsRefusal(msg []byte, m jsonrpc.Message) *refusal {
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" || !req.ID.IsValid() || len(req.Params) == 0 {
		return nil
	}
	var p *sdk.InitializeParams
	err := json.Unmarshal(req.Params, &p)
	if err == nil && p == nil {
		err = errors.New("params null")
	}
	if err == nil {
		return nil
	}
	return &refusal{id: idOf(msg), code: jsonrpc.CodeInvalidParams,
		message: fmt.Sprintf("invalid params of initialize: %v (they are the client's protocolVersion, a string, its capabilities and its clientInfo, objects)", err)}
}

// maxNesting is the deepest JSON the SDK decodes a message of.
const maxNesting = 1000

// nesting is how deep the objects and arrays of JSON b nest.
func nesting(b []byte) int {
	depth, deepest, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// takesBatches reports whether the SDK takes JSON-RPC batches in ss: its
// client asked, in initialize, for a protocol version the SDK has that
// is older than 2025-06-18 (the SDK then agrees to it). A session not yet
// initialized, or of the newer per-request protocol, takes none here.
func takesBatches(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && versionTakesBatches(p.ProtocolVersion)
}

// versionTakesBatches reports whether the SDK takes batches in a session
// whose client asked for protocol version v: one the SDK has that is
// older than 2025-06-18 (the SDK then agrees to it).
func versionTakesBatches(v string) bool {
	return v < "2025-06-18" && slices.Contains(sdk.SupportedProtocolVersions(), v)
}

// idOf is the id of the request msg, when one can be read from it: a
// string or a number; null otherwise.
func idOf(msg []byte) json.RawMessage {
	var s idScanner
	s.feed(msg)
	return s.requestID()
}

// nullID reports whether msg, a JSON object, has an "id" member whose
// value is null.
func nullID(msg []byte) bool {
	var s idScanner
	s.feed(msg)
	return s.found && string(s.id) == "null"
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

// requestID is the id found, if it is one a request may have (a string
// or a number), or null.
func (s *idScanner) requestID() json.RawMessage {
	id := s.id
	if !s.found || !json.Valid(id) || !(id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		return json.RawMessage("null")
	}
	return id
}

// keep adds c to the id, giving up on an id too long to be one.
func (s *idScanner) keep(c byte) {
	if s.id = append(s.id, c); len(s.id) > 256 {
		s.gone = true
	}
}

// lockedWriter serialises the SDK's messages and lineLimiter's answers,
// each one Write of a whole line. A failed write is told to failed, if
// set.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	failed func(error)
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if err != nil && l.failed != nil {
		l.failed(err)
	}
	return n, err
}
