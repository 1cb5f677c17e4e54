package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// capped is the http.RoundTripper of a url server's connection: it reads
// no answer of more than limit bytes, as frames reads none of a command
// server. A stream of server-sent events is read through events and a
// JSON body through answer: an answer over the limit is dropped while it
// is read, its call fails with dropCode, and the connection goes on. Any
// other body (an error page) is cut at limit.
type capped struct {
	next  http.RoundTripper
	limit int
}

func (c capped) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return refusedAnswer(r, resp)
	}
	var body io.Reader
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mediaType {
	case "text/event-stream":
		body = &events{br: bufio.NewReaderSize(resp.Body, 64<<10), limit: c.limit, req: r}
	case "application/json":
		body = &answer{body: resp.Body, limit: c.limit, req: r, size: resp.ContentLength}
	default:
		if id := requestID(r); id != nil {
			return noAnswer(resp, id, mediaType)
		}
		body = io.LimitReader(resp.Body, int64(c.limit))
	}
	resp.Body, resp.ContentLength = readCloser{body, resp.Body}, -1
	return resp, nil
}

// noAnswer is what passes on of resp, a 2xx answer of mediaType to the
// request of id that holds no answer (202 Accepted and no body, say): an
// error response to the request that says what came (cutCode), where the
// SDK's client would fail the call with "unsupported content type" and
// the connection with it.
func noAnswer(resp *http.Response, id json.RawMessage, mediaType string) (*http.Response, error) {
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
	what := "no body"
	if t := strings.Join(strings.Fields(string(bytes.ToValidUTF8(text, []byte("?")))), " "); t != "" {
		what = fmt.Sprintf("a body of type %q: %s", mediaType, t)
	}
	msg := fmt.Sprintf("the server answered %s with %s, not the call's answer (a JSON-RPC response, as application/json or text/event-stream); a fault of the server", resp.Status, what)
	answer := errorAnswer(id, cutCode, msg)
	resp.Header.Set("Content-Type", "application/json")
	resp.StatusCode, resp.Status = http.StatusOK, fmt.Sprintf("200 OK (was %s)", resp.Status)
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(answer)), int64(len(answer))
	return resp, nil
}

// misanswered is, for body, a JSON-RPC response to a request other than
// r's, the error response to r's that says so (cutCode); nil for any other
// body. The SDK's client would wait for the answer that never comes until
// the call's time ran out.
func misanswered(r *http.Request, body []byte) []byte {
	var m struct {
		ID     json.RawMessage
		Method *string
	}
	if json.Unmarshal(body, &m) != nil || m.Method != nil || len(m.ID) == 0 {
		return nil
	}
	id := requestID(r)
	if id == nil || sameID(id, m.ID) {
		return nil
	}
	return errorAnswer(id, cutCode, fmt.Sprintf("the server answered the call with a response to another request (id %s, where the call's is %s); a fault of the server",
		cut(string(m.ID), 80), id))
}

// batchAnswer is, for body, a JSON-RPC batch (a JSON array) that answers
// r's request, the member that is the request's answer, its id spelled as
// the request's (see respelled), which the SDK's client reads where it
// would fail on the batch (and end the connection with it); the batch's
// other members are let go, as a JSON body passes on one message. A batch
// that holds no answer to the request is the error response to it
// (cutCode) that says what came. nil for any other body, or a request that
// awaits no answer.
func batchAnswer(r *http.Request, body []byte) []byte {
	members, ok := batchOf(body)
	if !ok {
		return nil
	}
	id := requestID(r)
	if id == nil {
		return nil
	}
	for _, m := range members {
		if of, ok := responseID(m); ok && sameID(of, id) {
			return respelled(m, of, id)
		}
	}
	return errorAnswer(id, cutCode, fmt.Sprintf("the server answered the call with a JSON-RPC batch of %d messages, none of them the call's answer (a response of id %s); a fault of the server",
		len(members), id))
}

// respelled is msg, a response whose id, of, is the same as id, the
// request's (sameID), with the id spelled as the request spelled it: a
// server may write 7.0 for 7, which a client that matches an answer to
// its call by the id as written would not match.
func respelled(msg, of, id json.RawMessage) json.RawMessage {
	if bytes.Equal(of, id) {
		return msg
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	m["id"] = id
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// batchOf is the members of msg if it is a JSON-RPC batch, a JSON array.
func batchOf(msg []byte) ([]json.RawMessage, bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || msg[0] != '[' {
		return nil, false
	}
	var members []json.RawMessage
	if json.Unmarshal(msg, &members) != nil {
		return nil, false
	}
	return members, true
}

// responseID is the id of msg if it is a JSON-RPC response: a message
// with an id and no method.
func responseID(msg []byte) (json.RawMessage, bool) {
	var m struct {
		ID     json.RawMessage
		Method *string
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != nil || len(m.ID) == 0 {
		return nil, false
	}
	return m.ID, true
}

// sameID reports whether two JSON-RPC ids are the same: the same string,
// or the same number however written (1 and 1.0).
func sameID(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	switch x := x.(type) {
	case string:
		y, ok := y.(string)
		return ok && x == y
	case float64:
		y, ok := y.(float64)
		return ok && x == y
	}
	return false
}

type readCloser struct {
	io.Reader
	io.Closer
}

// refusedAnswer is what passes on of resp, a status other than 2xx, to
// r: a JSON-RPC error response to r's request in its body is passed on
// as the answer (status 200), which the SDK's client would drop for a
// status it takes as passing (500, 502, 503, 504, 429), keeping only the
// status's name; any other body is an error that names the status and
// what the body says (the SDK's client keeps the status's name alone),
// but for an answer to a message that awaits none. A 404 to a request of
// a session says the session is gone, which the SDK's client reads from
// the status, and then answers with a new session, but only when the body
// holds no JSON-RPC error (cairn mcp's and the TypeScript SDK's hold one),
// which it would take for the call's answer: its body is dropped.
func refusedAnswer(r *http.Request, resp *http.Response) (*http.Response, error) {
	if resp.StatusCode == http.StatusNotFound && r.Header.Get("Mcp-Session-Id") != "" {
		io.Copy(io.Discard, io.LimitReader(resp.Body, refusalBody))
		resp.Body.Close()
		resp.Body, resp.ContentLength = http.NoBody, 0
		return resp, nil
	}
	id := requestID(r)
	if id == nil {
		return resp, nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, refusalBody))
	if err != nil {
		return nil, fmt.Errorf("the server answered %s, and its body could not be read: %w", resp.Status, err)
	}
	var m struct {
		ID    json.RawMessage
		Error *struct{ Code int64 }
	}
	if json.Unmarshal(body, &m) == nil && m.Error != nil && sameID(m.ID, id) {
		resp.StatusCode, resp.Status = http.StatusOK, fmt.Sprintf("200 OK (was %s)", resp.Status)
		resp.Header.Set("Content-Type", "application/json")
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		return resp, nil
	}
	text := strings.Join(strings.Fields(string(bytes.ToValidUTF8(body, []byte("?")))), " ")
	if text == "" {
		return nil, fmt.Errorf("the server answered %s, with no body to say why", resp.Status)
	}
	return nil, fmt.Errorf("the server answered %s: %s", resp.Status, cut(text, 500))
}

// refusalBody is the most read of the body of an answer whose status
// refuses a request.
const refusalBody = 64 << 10

// stopCode is the code of the error response that answer puts in the
// place of an answer its call stopped waiting for.
const stopCode = -32091

// cutCode is the code of the error response that answer and events put
// in the place of an answer the server broke: cut short (its connection
// closed, or its stream ended, before the answer was whole), a response
// to another request, or no answer at all.
const cutCode = -32092

// answer is a JSON body (one message), the answer to req, passed on
// whole up to limit bytes. A longer one is read to its end without being
// kept and replaced by the error response (dropCode) to its request, as
// frames replaces a line, or, if it is not a response, by nothing (which
// the SDK does not take: it ends the connection, which is made again for
// the next call). A body whose reading fails is replaced by an error
// response to its request: if the call has stopped (cairn cancelled it,
// or its time ran out), the likely cause, one nobody awaits any more
// (stopCode); if not, one that says how far the answer came before the
// server cut it short (cutCode), where the SDK's client would end the
// connection with "failed to read body". Either way the connection goes
// on, as it does when a stream of events is cut so. An error reading a
// body that answers no request is passed on (and ends the connection).
type answer struct {
	body  io.Reader
	limit int
	req   *http.Request
	size  int64     // its Content-Length; -1 if unknown
	out   io.Reader // what is passed on, once read
}

func (a *answer) Read(p []byte) (int, error) {
	if a.out == nil {
		a.out = a.read()
	}
	return a.out.Read(p)
}

func (a *answer) read() io.Reader {
	kept, err := io.ReadAll(io.LimitReader(a.body, int64(a.limit)+1))
	if err != nil {
		return a.failed(err, int64(len(kept)))
	}
	if len(kept) <= a.limit {
		if one := batchAnswer(a.req, kept); one != nil {
			return bytes.NewReader(one)
		}
		if other := misanswered(a.req, kept); other != nil {
			return bytes.NewReader(other)
		}
		return bytes.NewReader(kept)
	}
	var s messageScan
	s.feed(kept)
	rest, err := io.Copy(&s, a.body)
	if err != nil {
		return a.failed(err, int64(len(kept))+rest)
	}
	out := dropAnswer(&s, len(kept)+int(rest), a.limit)
	if out == nil {
		out = dropBatch(&s, requestID(a.req), len(kept)+int(rest), a.limit)
	}
	return bytes.NewReader(out)
}

// failed is what is passed on of an answer whose reading failed with err
// after n bytes.
func (a *answer) failed(err error, n int64) io.Reader {
	id := requestID(a.req)
	if id == nil {
		return failedReader{err}
	}
	code, msg := stopCode, fmt.Sprintf("the call stopped before its answer was read: %v", err)
	if a.req.Context().Err() == nil {
		of := ""
		if a.size >= 0 {
			of = fmt.Sprintf(" of the %d it announced", a.size)
		}
		code, msg = cutCode, fmt.Sprintf("the server cut its answer short: %d bytes%s came before the connection failed (%v)", n, of, err)
	}
	return bytes.NewReader(errorAnswer(id, code, msg))
}

// errorAnswer is the JSON-RPC error response of code and msg to the
// request of id.
func errorAnswer(id json.RawMessage, code int, msg string) []byte {
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": msg}})
	return answer
}

// requestID is the id of the request that r sends: nil for anything but
// a request that awaits a response.
func requestID(r *http.Request) json.RawMessage {
	if r.GetBody == nil {
		return nil
	}
	body, err := r.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var s messageScan
	if _, err := io.Copy(&s, body); err != nil || !s.method.found || !s.id.found ||
		!json.Valid(s.id.id) || string(s.id.id) == "null" {
		return nil
	}
	return s.id.id
}

// failedReader is a reader that fails with err.
type failedReader struct{ err error }

func (f failedReader) Read([]byte) (int, error) { return 0, f.err }

// headers is the http.RoundTripper that sends a url server's entry's
// headers with each request.
type headers struct{ h map[string]string }

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
