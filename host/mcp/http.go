package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/internal/httpauth"
	"github.com/cairnrun/cairn/internal/netanswer"
)

// ErrTokenRequired: an address other than loopback was given without a
// bearer token.
var ErrTokenRequired = errors.New("serving beyond this machine needs a bearer token")

// CheckAddr refuses to serve HTTP on an address other machines can reach
// (anything but a loopback address or "localhost", including an empty
// host such as ":8080") without a token.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w (want HOST:PORT, e.g. 127.0.0.1:8080)", addr, err)
	}
	if token != "" || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("address %q is not loopback: %w; pass --token (clients send \"Authorization: Bearer TOKEN\") or serve on 127.0.0.1",
		addr, ErrTokenRequired)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler serves the server over MCP's Streamable HTTP transport. A
// request whose Origin is not the server's own (the host it was sent to)
// or a loopback one is refused with 403, as MCP asks against DNS
// rebinding (a browser sends the Origin of the page that makes the
// request); so, by the SDK, is a request that reached a loopback address
// with a Host that is not loopback. With a token, a request without
// "Authorization: Bearer TOKEN" is refused with 401. Each refusal, the
// SDK's own included (see answerRefusals), is a JSON-RPC error that says
// why, with the refusal's status. A DELETE that ends a client's session
// stops its calls at once, as the end of a client's input does on stdio.
//
// A session whose client leaves it idle for Options.SessionIdle (unless
// it is negative), with no request open (no POST being served, no
// standalone stream held), is closed, as a DELETE closes it: its client
// is gone without a DELETE (a process killed), or, if not, it is
// answered 404 and starts a new session, as MCP asks of a client.
func (s *Server) Handler(token string) http.Handler {
	var h http.Handler = s.countPosts(s.endOnDelete(s.closeIdle(keepStreamsAlive(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, nil)))))
	h = refuseBeforeInitialize(h)
	h = s.refuseMalformed(h)
	h = bodyWithin(h)
	if token != "" {
		h = requireToken(token, h)
	}
	return checkOrigin(h)
}

// refuseBeforeInitialize refuses, with 400 and -32600 as stdio refuses
// it with -32600, a POST without a session (no Mcp-Session-Id) whose
// request is not initialize (or ping, or of protocol 2026-07-28, which
// carries its session in _meta): the SDK answers it with code 0, no
// JSON-RPC code. A body over the SDK's bound passes on, for the SDK's 413.
func refuseBeforeInitialize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || baseMediaType(r.Header.Get("Content-Type")) != "application/json" {
			next.ServeHTTP(w, r) // a body not of JSON: the SDK's 415
			return
		}
		body, ok := peekBody(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		for _, m := range decodeLine(body) {
			req, ok := m.(*jsonrpc.Request)
			if !ok || !req.ID.IsValid() || req.Method == "initialize" || req.Method == "ping" || perRequestProtocol(req) {
				continue
			}
			msg := fmt.Sprintf("invalid request: %q before initialize: a client's first request is initialize, whose answer's Mcp-Session-Id header it sends with every later request", req.Method)
			answer, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(answer)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooLarge answers a POST whose body, of which head is the start, is over
// the SDK's bound with 413 and a JSON-RPC error to its request (-32600),
// and closes its connection. The SDK answers it in plain text, which the
// Go SDK's client takes for a broken connection: its session ended, and
// every later call failed, for one call's large arguments.
func tooLarge(w http.ResponseWriter, head []byte) {
	var s messageScan
	s.feed(head)
	id := json.RawMessage("null")
	if s.id.found && json.Valid(s.id.id) && string(s.id.id) != "null" {
		id = s.id.id
	}
	w.Header().Set("Connection", "close")
	writeRefusalStatus(w, http.StatusRequestEntityTooLarge, &refusal{id: id, code: jsonrpc.CodeInvalidRequest,
		message: fmt.Sprintf("invalid request: the POST's body is over %d bytes, the most the server reads of one; send a smaller request (arguments that large are better written to the workspace a piece at a time)",
			sdk.DefaultMaxRequestBodyBytes)})
}

// peekBody reads r's body, up to the SDK's bound, and gives it back to r
// for the handlers after; false when it could not be read whole within
// the bound (the SDK answers that one).
func peekBody(r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	return body, err == nil && len(body) <= sdk.DefaultMaxRequestBodyBytes
}

// refuseMalformed answers, with 400 and a JSON-RPC error as stdio answers
// such a line, a POST whose body is not JSON (-32700, parse error: empty,
// a message cut short, two in one body, or one with data after it, which
// the SDK would answer as if the rest were not there) or is JSON that is
// no JSON-RPC message (-32600, invalid request), naming the request's id
// when it can be read: the SDK answers either with a plain-text 400,
// which the Go SDK's client takes for a broken connection. So is a
// request whose id is null, which the SDK takes for a notification and
// never answers, or a number it would answer with another id (1 for 1.5),
// and a batch where the session has none or one the SDK would not answer
// whole (see batchRefusal). A body the SDK refuses before it reads it
// (not of Content-Type application/json, over its bound) is the SDK's to
// refuse, and so is one of a session it has not (404); every refusal of
// the SDK's is answered as a JSON-RPC error (see answerRefusals).
func (s *Server) refuseMalformed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || baseMediaType(r.Header.Get("Content-Type")) != "application/json" {
			answerRefusals(w, r, nil, next)
			return
		}
		body, ok := peekBody(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		ref := malformed(body)
		if ref == nil && bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			ref = s.batchRefusal(r, bytes.TrimSpace(body))
		}
		switch {
		case !s.servesSession(r.Header.Get("Mcp-Session-Id")):
			answerRefusals(w, r, body, next)
		case ref == nil && bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")):
			serveBatch(w, r, body, next)
		case ref == nil:
			answerRefusals(w, r, body, next)
		default:
			writeRefusal(w, ref)
		}
	})
}

// writeRefusal answers a POST with status 400 and the JSON-RPC error r.
func writeRefusal(w http.ResponseWriter, r *refusal) { writeRefusalStatus(w, http.StatusBadRequest, r) }

// writeRefusalStatus answers a POST with status and the JSON-RPC error r.
func writeRefusalStatus(w http.ResponseWriter, status int, r *refusal) {
	answer, _ := json.Marshal(errorResponse{Version: "2.0", ID: r.id, Error: jsonrpc.Error{Code: r.code, Message: r.message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(answer)
}

// bodyTimeout bounds how long a POST's body may take to arrive once its
// headers have (the HTTP server bounds those).
var bodyTimeout = 30 * time.Second

// bodyWithin reads a POST's body (as far as the SDK's bound and a byte
// past it, which the SDK answers with 413) within bodyTimeout, for the
// handlers after it to read from memory. Without it a client, once past
// the token, could send its headers and then its body a byte at a time,
// or never, and hold a handler and its goroutine for as long as it
// liked. A body that does not arrive in time is answered with 408 and a
// JSON-RPC error, and its connection is closed.
func bodyWithin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Method != http.MethodPost || rc.SetReadDeadline(time.Now().Add(bodyTimeout)) != nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Header().Set("Connection", "close")
			writeRefusalStatus(w, http.StatusRequestTimeout, &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeInvalidRequest,
				message: fmt.Sprintf("the request's body did not arrive within %s of its headers; send it whole, at once", bodyTimeout)})
			return
		}
		rc.SetReadDeadline(time.Time{})
		if len(body) > sdk.DefaultMaxRequestBodyBytes {
			tooLarge(w, body)
			return
		}
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		next.ServeHTTP(w, r)
	})
}

// answerRefusals serves r with next, the SDK, and answers with a JSON-RPC
// error what the SDK refuses in plain text (http.Error), of which a client
// speaking JSON-RPC reads nothing (the Go SDK's client shows the status
// alone, or takes a 400 for a broken connection): the status is kept, and
// the error says what was wrong and what to send instead (see
// refusalOf). body is the POST's JSON-RPC messages, or nil if they were
// not read: a request among them is named by the answer's id. Of a POST's
// messages, a request of a method the server does not handle is answered
// -32601, and a notification of one is let go (202), as stdio lets it
// go: none is answered.
func answerRefusals(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	hw := &refusalWriter{ResponseWriter: w}
	next.ServeHTTP(hw, r)
	if !hw.held {
		return
	}
	if body == nil && r.Method == http.MethodPost {
		body, _ = peekBody(r) // refused before the SDK read it
	}
	answerRefusal(w, r, body, hw.status, hw.text.String())
}

// answerRefusal answers r, whose body is body (nil for none), that the SDK
// refused with status and text, in plain text, as answerRefusals says.
func answerRefusal(w http.ResponseWriter, r *http.Request, body []byte, status int, text string) {
	text = strings.TrimSpace(text)
	ref := &refusal{id: json.RawMessage("null")}
	var req *jsonrpc.Request
	if m, err := jsonrpc.DecodeMessage(bytes.TrimSpace(body)); err == nil {
		req, _ = m.(*jsonrpc.Request)
	}
	switch {
	case req != nil && req.ID.IsValid():
		ref.id = idOf(bytes.TrimSpace(body))
	case req != nil && strings.HasPrefix(text, notHandled):
		w.Header().Del("Content-Type")
		w.Header().Del("X-Content-Type-Options")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch {
	case strings.HasPrefix(text, notHandled) && req != nil:
		ref.code, ref.message = jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %q", req.Method)
	case strings.HasPrefix(text, notHandled):
		ref.code, ref.message = jsonrpc.CodeMethodNotFound, text
	default:
		ref.code, ref.message = refusalOf(r, status, text)
	}
	w.Header().Del("X-Content-Type-Options")
	writeRefusalStatus(w, status, ref)
}

// notHandled begins the SDK's refusal of a method it does not handle.
const notHandled = "JSON RPC not handled"

// refusalOf is the code and message of the JSON-RPC error that answers r,
// which the SDK refused with status and text: what was wrong, in the
// request's own words where it can (the header it sent), and what to send
// instead. A refusal this does not know keeps the SDK's text.
func refusalOf(r *http.Request, status int, text string) (int64, string) {
	session := r.Header.Get("Mcp-Session-Id")
	newSession := "start a new session: send initialize without an Mcp-Session-Id header, and the Mcp-Session-Id its answer gives with every later request"
	switch {
	case status == http.StatusMethodNotAllowed:
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: method %s is not served here: this MCP endpoint serves POST (JSON-RPC messages), GET (a session's standalone stream of events) and DELETE (to end a session)", r.Method)
	case status == http.StatusUnsupportedMediaType:
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: Content-Type %q: a POST's body is JSON-RPC, sent with Content-Type: application/json", r.Header.Get("Content-Type"))
	case strings.HasPrefix(text, "Accept must contain both"):
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: Accept %q: a POST is sent with Accept: application/json, text/event-stream (its answer comes as JSON or as a stream of events)", r.Header.Get("Accept"))
	case strings.HasPrefix(text, "Accept must contain 'text/event-stream'"):
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: Accept %q: a GET, which opens a session's standalone stream of events, is sent with Accept: text/event-stream", r.Header.Get("Accept"))
	case strings.Contains(text, "requires an Mcp-Session-Id header"):
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a %s without an Mcp-Session-Id header: send the one the answer to initialize gave (a GET opens that session's standalone stream of events, a DELETE ends the session); without a session, initialize first", r.Method)
	case strings.HasPrefix(text, "Bad Request: Unsupported protocol version"):
		versions := strings.TrimSuffix(strings.TrimPrefix(text, "Bad Request: Unsupported protocol version (supported versions: "), ")")
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: Mcp-Protocol-Version %q is not a version this server speaks (it speaks %s): send the version initialize agreed on", r.Header.Get("Mcp-Protocol-Version"), versions)
	case text == "session is closing":
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: session %q is closing: %s", session, newSession)
	case status == http.StatusNotFound:
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: session %q not found: it has ended (a DELETE ended it, it was left idle past cairn mcp's --idle-timeout, or the server restarted) or never was; %s", session, newSession)
	case r.Method == http.MethodPost && strings.Contains(text, "Last-Event-ID"):
		return jsonrpc.CodeInvalidRequest, "invalid request: a POST with a Last-Event-ID header, which resumes a GET's stream only: send the POST without it"
	case strings.Contains(text, "Last-Event-ID") || text == "stream replay unsupported":
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: Last-Event-ID %q: cairn mcp keeps no events to resume a stream with; send the GET without Last-Event-ID (the events the stream missed are not sent again)", r.Header.Get("Last-Event-ID"))
	case status == http.StatusConflict:
		return jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: session %q has a standalone stream of events already, held by another GET: a session has one; read that one, or close it before opening another", session)
	case status >= 500:
		return jsonrpc.CodeInternalError, fmt.Sprintf("internal error: %s (HTTP %d); try again, and if it persists, restart cairn mcp", text, status)
	case strings.HasPrefix(text, "invalid request"):
		return jsonrpc.CodeInvalidRequest, text
	}
	return jsonrpc.CodeInvalidRequest, "invalid request: " + strings.TrimPrefix(text, "Bad Request: ")
}

// refusalWriter holds back a plain-text answer of status 400 or more,
// the SDK's refusal (http.Error), for answerRefusals to answer; anything
// else passes through.
type refusalWriter struct {
	http.ResponseWriter
	held   bool
	status int
	text   bytes.Buffer
}

func (w *refusalWriter) WriteHeader(code int) {
	if code >= http.StatusBadRequest && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.held, w.status = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalWriter) Write(p []byte) (int, error) {
	if w.held {
		return w.text.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap is for http.ResponseController, which the SDK flushes events with.
func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// batchRefusal is why a POST's batch, msg (valid JSON), is refused, as
// stdio refuses it: a batch without a session (initialize comes alone) or
// in a session whose protocol version, negotiated or in the request's
// Mcp-Protocol-Version header, is 2025-06-18 or later (which has none), or
// one the SDK would not answer whole (see batchMessages); nil for a batch
// the SDK is to take.
func (s *Server) batchRefusal(r *http.Request, msg []byte) *refusal {
	why := ""
	switch ss := s.session(r.Header.Get("Mcp-Session-Id")); {
	case ss == nil:
		why = "a JSON-RPC batch without a session: initialize is sent alone, and only a session of a protocol version before 2025-06-18 takes batches"
	case !takesBatches(ss) || r.Header.Get("Mcp-Protocol-Version") >= "2025-06-18":
		why = noBatches
	default:
		_, _, why = batchMessages(msg)
	}
	if why == "" {
		return nil
	}
	return &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + why}
}

// malformed is why body, a POST's, is refused, as stdio refuses a line:
// it is not JSON, or, not a batch, it is no JSON-RPC message, a request
// whose id cannot be answered as sent, or an initialize whose params
// cannot be read (see paramsRefusal); nil if not.
func malformed(body []byte) *refusal {
	msg := bytes.TrimSpace(body)
	if len(msg) == 0 {
		return &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeParseError,
			message: "parse error: an empty body (a POST's body is one JSON-RPC message)"}
	}
	if !json.Valid(msg) {
		err := json.Unmarshal(msg, new(json.RawMessage)) // for what is wrong
		return &refusal{id: idOf(msg), code: jsonrpc.CodeParseError,
			message: fmt.Sprintf("parse error: %v (a POST's body is one JSON-RPC message)", err)}
	}
	if msg[0] == '[' {
		return nil
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return &refusal{id: idOf(msg), code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + err.Error()}
	}
	if r := paramsRefusal(msg, m); r != nil {
		return r
	}
	req, ok := m.(*jsonrpc.Request)
	switch {
	case !ok:
	case !req.ID.IsValid() && nullID(msg):
		return &refusal{id: json.RawMessage("null"), code: jsonrpc.CodeInvalidRequest,
			message: "invalid request: id null: a request's id is a string or a number (a notification has no id member)"}
	case req.ID.IsValid():
		if why := idFault(idOf(msg)); why != "" {
			return &refusal{id: idOf(msg), code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + why}
		}
	}
	return nil
}

// servesSession reports whether id is that of a session the server has,
// or is none (a request without a session).
func (s *Server) servesSession(id string) bool {
	return id == "" || s.session(id) != nil
}

// session is the session of id the server has; nil for none.
func (s *Server) session(id string) *sdk.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.srv.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// baseMediaType is the media type of a Content-Type, without its
// parameters; "" for one that does not read.
func baseMediaType(v string) string {
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}

// checkOrigin refuses a request whose Origin header names a host other
// than the one the request was sent to, or a loopback one.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		switch {
		case origin != "" && !originAllowed(origin, r.Host):
			refuseHTTP(w, r, http.StatusForbidden, fmt.Sprintf("cairn mcp: Origin %q is not this server's (%s) nor a loopback one: refused, against DNS rebinding; "+
				"a client on another origin reaches cairn through a proxy of its own origin", origin, r.Host))
		case hostRefused(r):
			refuseHTTP(w, r, http.StatusForbidden, fmt.Sprintf("cairn mcp: Host %q is not a loopback name, and the request reached a loopback address: refused, against DNS rebinding; "+
				"send Host: 127.0.0.1 (or localhost) with its port", r.Host))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// refuseHTTP answers r, refused before any message of it is served (its
// Origin, Host or token), with status and a JSON-RPC error (-32600) that
// says why, msg, and closes its connection: the Go SDK's client shows the
// message of such an answer, where of a plain-text one it shows the
// status alone.
func refuseHTTP(w http.ResponseWriter, r *http.Request, status int, msg string) {
	w.Header().Set("Connection", "close")
	writeRefusalStatus(w, status, &refusal{id: refusedID(w, r), code: jsonrpc.CodeInvalidRequest, message: msg})
}

// refusedID is the id of the request a refused POST, r, carries, read
// from the first 4 KiB of its body within bodyTimeout, for the answer
// to name (the Go SDK's client reads no answer without an id); null if
// none is found there.
func refusedID(w http.ResponseWriter, r *http.Request) json.RawMessage {
	if r.Method != http.MethodPost {
		return json.RawMessage("null")
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
	head, _ := io.ReadAll(io.LimitReader(r.Body, 4<<10))
	var s messageScan
	s.feed(head)
	if !s.id.found || !json.Valid(s.id.id) || string(s.id.id) == "null" {
		return json.RawMessage("null")
	}
	return s.id.id
}

// originAllowed reports whether origin, an Origin header's value, is the
// server's own, host (a request's Host), or a loopback one.
func originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null", or not an origin
	}
	return strings.EqualFold(u.Host, host) || isLoopback(u.Hostname())
}

// countPosts counts the POSTs being served, whose answers Close waits
// for: a POST ends once each request it carries has been answered. Each
// POST is named, in postHeader, for the calls it carries to find its
// context (see postContext).
func (s *Server) countPosts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			r.Header.Del(postHeader)
			next.ServeHTTP(w, r)
			return
		}
		s.posts.Add(1)
		defer func() {
			s.answered.Store(time.Now().UnixNano()) // before the count: Close reads it after
			s.posts.Add(-1)
		}()
		name := rand.Text()
		r.Header.Set(postHeader, name) // whatever the client sent
		s.postCtxs.Store(name, r.Context())
		defer s.postCtxs.Delete(name)
		next.ServeHTTP(w, r)
	})
}

// postHeader names, in the header of a POST as the SDK hands it to a
// call (sdk.RequestExtra), the POST the call came in.
const postHeader = "Cairn-Post"

// postContext is the context of the POST a call of req came in, which
// ends when its client goes away (its connection closed) before the
// call is answered; nil for a call that came otherwise (stdio).
func (s *Server) postContext(req *sdk.CallToolRequest) context.Context {
	if req.Extra == nil || req.Extra.Header == nil {
		return nil
	}
	ctx, ok := s.postCtxs.Load(req.Extra.Header.Get(postHeader))
	if !ok {
		return nil
	}
	return ctx.(context.Context)
}

// endOnDelete stops the calls of a session its client ends with DELETE
// before the SDK closes it, which waits for them.
func (s *Server) endOnDelete(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" && !hostRefused(r) {
			s.endSession(id, errSessionDeleted)
		}
		next.ServeHTTP(w, r)
	})
}

// hostRefused reports whether the SDK refuses r for its Host: it reached a
// loopback address with a Host that is not loopback (DNS rebinding).
func hostRefused(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	return isLoopbackAddr(local.String()) && !isLoopbackAddr(r.Host)
}

// isLoopbackAddr reports whether addr, HOST or HOST:PORT, names a
// loopback host, as the SDK reads it.
func isLoopbackAddr(addr string) bool {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	addr = strings.Trim(addr, "[]")
	ip := net.ParseIP(addr)
	return addr == "localhost" || ip != nil && ip.IsLoopback()
}

func requireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := httpauth.Bearer(r)
		if !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
			refuseHTTP(w, r, http.StatusUnauthorized, "cairn mcp: missing or wrong bearer token: send the header \"Authorization: Bearer TOKEN\" with the token `cairn mcp --token` was given")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sessionUse is how an HTTP session is used: how many of its client's
// requests are open, and when the last one ended.
type sessionUse struct {
	open int
	last time.Time
}

// closeIdle tracks the requests of each HTTP session and closes a
// session none of whose requests has been open for s.opts.SessionIdle
// (none, for a negative one). The SDK's own SessionTimeout counts POSTs
// only, and would close the session of a live client that holds its
// standalone stream open and makes no call for a while.
func (s *Server) closeIdle(next http.Handler) http.Handler {
	s.idleOnce.Do(func() { go s.closeIdleEvery(idlePeriod(s.opts.SessionIdle)) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		if id != "" && !s.servesSession(id) {
			next.ServeHTTP(w, r) // 404: no session to keep track of
			return
		}
		if id != "" {
			s.useSession(id, 1)
		}
		defer func() {
			if id == "" {
				id = w.Header().Get("Mcp-Session-Id") // a session the request began
				if id == "" {
					return
				}
				s.useSession(id, 0)
				return
			}
			s.useSession(id, -1)
		}()
		next.ServeHTTP(w, r)
	})
}

// useSession counts a request of session id opened (+1), ended (-1), or
// none (0), and marks the session used now.
func (s *Server) useSession(id string, open int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.uses[id]
	if u == nil {
		u = &sessionUse{}
		s.uses[id] = u
	}
	u.open += open
	u.last = time.Now()
}

// idlePeriod is how often sessions are looked at for SessionIdle idle:
// a quarter of it, from 10 ms to a minute (a minute for never, to forget
// the sessions that are gone).
func idlePeriod(idle time.Duration) time.Duration {
	if idle < 0 {
		return time.Minute
	}
	return min(max(idle/4, 10*time.Millisecond), time.Minute)
}

// closeIdleEvery looks, every period until Close, for HTTP sessions left
// idle (see sweepIdle).
func (s *Server) closeIdleEvery(period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-s.closed.Done():
			return
		case now := <-tick.C:
			s.sweepIdle(now, period)
		}
	}
}

// sweepIdle closes the HTTP sessions left idle for s.opts.SessionIdle at
// now (none, if it is negative), their calls stopped at once. A session
// that no longer is (its client deleted it, or its id named none) is
// forgotten once unused for period.
func (s *Server) sweepIdle(now time.Time, period time.Duration) {
	live := map[string]*sdk.ServerSession{}
	for ss := range s.srv.Sessions() {
		live[ss.ID()] = ss
	}
	var idle []*sdk.ServerSession
	s.mu.Lock()
	for id, u := range s.uses {
		ss, ok := live[id]
		switch {
		case u.open > 0:
		case !ok && now.Sub(u.last) > period:
			delete(s.uses, id)
		case ok && s.opts.SessionIdle > 0 && now.Sub(u.last) >= s.opts.SessionIdle:
			delete(s.uses, id)
			idle = append(idle, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range idle {
		s.endSession(ss.ID(), errSessionIdle)
		go ss.Close()
	}
}

// Listener is ln whose connections answer, as JSON-RPC errors, the errors
// net/http answers itself before any handler runs, in plain text (see
// netanswer.Listener): a request line or header that does not parse, a
// header too large, a Transfer-Encoding or HTTP version it does not read.
// Serve Handler's server on it.
func Listener(ln net.Listener) net.Listener {
	return netanswer.Listener(ln, "docs/mcp.md describes the endpoint", func(msg string) []byte {
		body, _ := json.Marshal(errorResponse{Version: "2.0", ID: json.RawMessage("null"),
			Error: jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + msg}})
		return body
	})
}
