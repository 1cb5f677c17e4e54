package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
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
	var body io.Reader
	switch mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mediaType {
	case "text/event-stream":
		body = &events{br: bufio.NewReaderSize(resp.Body, 64<<10), limit: c.limit}
	case "application/json":
		body = &answer{body: resp.Body, limit: c.limit, req: r}
	default:
		body = io.LimitReader(resp.Body, int64(c.limit))
	}
	resp.Body, resp.ContentLength = readCloser{body, resp.Body}, -1
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// stopCode is the code of the error response that answer puts in the
// place of an answer its call stopped waiting for.
const stopCode = -32091

// answer is a JSON body (one message), the answer to req, passed on
// whole up to limit bytes. A longer one is read to its end without being
// kept and replaced by the error response (dropCode) to its request, as
// frames replaces a line, or, if it is not a response, by nothing (which
// the SDK does not take: it ends the connection, which is made again for
// the next call). An error reading it is passed on (and ends the
// connection) unless the call has stopped (cairn cancelled it, or its
// time ran out), the likely cause: then it is replaced by an error
// response to the call (stopCode), which nobody awaits any more, so that
// the connection goes on, as it does when a stream of events is cut so.
type answer struct {
	body  io.Reader
	limit int
	req   *http.Request
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
		return a.failed(err)
	}
	if len(kept) <= a.limit {
		return bytes.NewReader(kept)
	}
	var s messageScan
	s.feed(kept)
	rest, err := io.Copy(&s, a.body)
	if err != nil {
		return a.failed(err)
	}
	return bytes.NewReader(dropAnswer(&s, len(kept)+int(rest), a.limit))
}

// failed is what is passed on of an answer whose reading failed with err.
func (a *answer) failed(err error) io.Reader {
	id := requestID(a.req)
	if a.req.Context().Err() == nil || id == nil {
		return failedReader{err}
	}
	msg := fmt.Sprintf("the call stopped before its answer was read: %v", err)
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": stopCode, "message": msg}})
	return bytes.NewReader(answer)
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
