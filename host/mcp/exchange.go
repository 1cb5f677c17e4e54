package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An exchange keeps, for one client on stdio, what the SDK's stdio
// transport does not keep for cairn to act on: the client's requests in
// flight (passed on and not yet answered) and which of them it cancelled,
// the server's requests that await the client's answer, and whether the
// session is initialized. With it the line check refuses, with -32600,
// what the SDK would answer wrongly or not at all (a request before
// initialize, which the SDK answers with code 0; an id in use by a request
// in flight, which it never answers), the writer drops the answer to a
// request the client cancelled (MCP: a receiver SHOULD NOT answer it), and
// at the end of the input the requests read are answered before the SDK
// is told the input ended (it writes nothing after). It is safe for
// concurrent use.
type exchange struct {
	mu      sync.Mutex
	calls   map[jsonrpc.ID]bool // the client's requests in flight; true: cancelled
	asked   map[jsonrpc.ID]bool // the server's requests awaiting the client's answer
	initID  jsonrpc.ID          // the initialize request in flight, if any
	ready   bool                // an initialize was answered with a result
	broken  bool                // a write failed: nothing more is answered
	changed chan struct{}       // closed, and made anew, at each change
}

func newExchange() *exchange {
	return &exchange{calls: map[jsonrpc.ID]bool{}, asked: map[jsonrpc.ID]bool{}, changed: make(chan struct{})}
}

// touch tells waiters that something changed; x.mu is held.
func (x *exchange) touch() {
	close(x.changed)
	x.changed = make(chan struct{})
}

// admit takes msgs, a line's messages (several for a batch), from the
// client: its requests go in flight, its cancellations mark them, its
// answers answer the server's requests. A request that must not pass on
// is refused, all of msgs with it, and admit says why.
func (x *exchange) admit(msgs []jsonrpc.Message) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			continue
		}
		if _, dup := x.calls[req.ID]; dup {
			return fmt.Sprintf("request id %v is in use by a request in flight; send each request with an id of its own", idText(req.ID))
		}
		if !x.ready && !x.initID.IsValid() && req.Method != "initialize" && req.Method != "ping" && !perRequestProtocol(req) {
			return fmt.Sprintf("%q before initialize: a client's first request is initialize (and then the notification notifications/initialized)", req.Method)
		}
	}
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Response:
			delete(x.asked, m.ID)
		case *jsonrpc.Request:
			switch {
			case m.ID.IsValid():
				x.calls[m.ID] = false
				if m.Method == "initialize" {
					x.initID = m.ID
				}
			case m.Method == "notifications/cancelled":
				x.cancel(m.Params)
			}
		}
	}
	x.touch()
	return ""
}

// cancel marks the request a notifications/cancelled names, if it is in
// flight, as the SDK finds it (jsonrpc.MakeID); x.mu is held.
func (x *exchange) cancel(params json.RawMessage) {
	id, ok := cancelledID(params)
	if _, in := x.calls[id]; ok && in {
		x.calls[id] = true
	}
}

// cancelledID is the request a notifications/cancelled with params names.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil
}

// perRequestProtocol reports whether req follows MCP's protocol of
// 2026-07-28, whose requests carry their session in _meta and need no
// initialize.
func perRequestProtocol(req *jsonrpc.Request) bool {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return false
	}
	v, _ := p.Meta[sdk.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

// outgoing reads p, one line the SDK writes, before it is written: a
// response answers a request in flight, a request of the server's awaits
// the client's answer. It reports whether to drop p: the lone response to
// a request the client cancelled.
func (x *exchange) outgoing(p []byte) (drop bool) {
	msgs := decodeLine(p)
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Response:
			cancelled, ok := x.calls[m.ID]
			if !ok {
				continue
			}
			delete(x.calls, m.ID)
			drop = cancelled && len(msgs) == 1
			if m.ID == x.initID {
				x.initID, x.ready = jsonrpc.ID{}, x.ready || m.Error == nil
			}
		case *jsonrpc.Request:
			switch {
			case m.ID.IsValid():
				x.asked[m.ID] = true
			case m.Method == "notifications/cancelled":
				// A question the server gave up on awaits no answer.
				if id, ok := cancelledID(m.Params); ok {
					delete(x.asked, id)
				}
			}
		}
	}
	x.touch()
	return drop
}

// decodeLine is the messages of a line: one, or a batch's.
func decodeLine(p []byte) []jsonrpc.Message {
	p = bytes.TrimSpace(p)
	if len(p) > 0 && p[0] == '[' {
		var raws []json.RawMessage
		json.Unmarshal(p, &raws)
		var msgs []jsonrpc.Message
		for _, raw := range raws {
			if m, err := jsonrpc.DecodeMessage(raw); err == nil {
				msgs = append(msgs, m)
			}
		}
		return msgs
	}
	if m, err := jsonrpc.DecodeMessage(p); err == nil {
		return []jsonrpc.Message{m}
	}
	return nil
}

// fail records that a write failed: no more answers will be written.
func (x *exchange) fail() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.broken = true
	x.touch()
}

// drain waits, once the client's input has ended, until every request it
// sent is answered, a write has failed, or stop is closed (the calls are
// being stopped: their answers are waited for a while, as settle does);
// it then returns nil, and the input's end may be passed on, after which
// the SDK writes nothing more. While it waits, the
// server's requests to the client can have no answer: it returns, as
// lines to read, an error answering each of them, so that the call that
// waits for one (an approval asked of a client of an older protocol)
// goes on. It calls probe every probeEvery, to find a client gone
// (whose probe fails a write, see fail).
func (x *exchange) drain(stop <-chan struct{}, probe func()) []byte {
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		x.mu.Lock()
		if x.broken || len(x.calls) == 0 {
			x.mu.Unlock()
			return nil
		}
		if len(x.asked) > 0 {
			lines := x.unanswerable()
			x.mu.Unlock()
			return lines
		}
		changed := x.changed
		x.mu.Unlock()
		select {
		case <-changed:
		case <-tick.C:
			probe()
		case <-stop:
			x.settle(stopGrace)
			return nil
		}
	}
}

// probeEvery is how often, once a client's input has ended, its output
// is looked at for its end closed (see outputClosed).
const probeEvery = time.Second

// unanswerable is an error response to each of the server's requests
// awaiting the client, which are then forgotten; x.mu is held.
func (x *exchange) unanswerable() []byte {
	var lines []byte
	for id := range x.asked {
		line, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "the client's input ended before it answered"}})
		lines = append(append(lines, line...), '\n')
	}
	clear(x.asked)
	return lines
}

// settle waits until every request in flight is answered, a write has
// failed, or d has passed.
func (x *exchange) settle(d time.Duration) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		x.mu.Lock()
		if x.broken || len(x.calls) == 0 {
			x.mu.Unlock()
			return
		}
		changed := x.changed
		x.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}

// idText is an id as the client wrote it, for a message.
func idText(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// maxExactID is the largest integer every JSON reader keeps exactly (the
// SDK reads a number id as a float64, and answers with what it read).
const maxExactID = 1<<53 - 1

var integerID = regexp.MustCompile(`^-?[0-9]+$`)

// idFault says why raw, a request's id that is a number, cannot be
// answered with the same id: it has a fraction or an exponent (1.5 would
// be answered as 1), or is too large to be read exactly. "" for a string
// or an integer that can be.
func idFault(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] == '"' || string(raw) == "null" {
		return ""
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if integerID.Match(raw) && err == nil && n >= -maxExactID && n <= maxExactID {
		return ""
	}
	return fmt.Sprintf("id %s: a request's id is a string or an integer from -%d to %d (one every JSON reader keeps exactly)", cut(string(raw), 80), maxExactID, maxExactID)
}

// exchangeWriter is the writer the SDK writes a client's messages with on
// stdio, each one line in one Write: it tells the exchange of each, and
// drops the answer to a request the client cancelled.
type exchangeWriter struct {
	w *lockedWriter
	x *exchange
}

func (e exchangeWriter) Write(p []byte) (int, error) {
	if e.x.outgoing(p) {
		return len(p), nil
	}
	return e.w.Write(p)
}
