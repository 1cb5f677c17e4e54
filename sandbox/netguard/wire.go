package netguard

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
)

// max_response_bytes bounds a body's bytes, and an HTTP/2 server can send
// frames that bring none: empty DATA frames, DATA frames of padding alone,
// one after another, each a few bytes, which would hold the request (and
// its call) until the grant's timeout. So the bytes an HTTP/2 response
// takes on the connection, TLS records, frames and padding included, are
// bounded too (wireBound), and a request past its bound is ended.
//
// The connection under TLS counts what it reads (wireConn). Requests to a
// host share its HTTP/2 connection, and the bytes read cannot be told
// apart by stream under TLS: each read counts for every request in
// flight on the connection, and a request is ended when the connection
// read, during its life, more than the bounds of all the requests that
// shared it in that time, its own included. Responses that are each
// within their bounds so never end one another, however many come and
// go beside a long one; a server that sends what brings no body on one
// is ended once it has used the bounds of all.

// wireBound is the most bytes on the connection that an HTTP/2 response
// with a body of at most max bytes may take: each byte of the body with
// the framing it may come in (frameCost), as a server that sends a stream
// of events a byte at a time, each byte a DATA frame and a TLS record of
// its own, sends it; and the headers (MaxHeaderBytes) four times over for
// the headers, the connection's settings, pings and window updates. What
// is past it brings no body: empty DATA frames, padding, or others.
func wireBound(max int64) int64 { return (1+frameCost)*max + 4*MaxHeaderBytes }

// frameCost is the most bytes of framing a byte of body may come with: a
// DATA frame's header (9 bytes), and a TLS record (at most 64 bytes more
// than what it carries: 22 in TLS 1.3, 29 in TLS 1.2 with AES-GCM, up to
// 64 with CBC, its MAC and its padding).
const frameCost = 9 + 64

// wireBoundError ends a request whose response passed its bound on the
// connection: bound, the wireBound of its body's bound, max, and of each
// of the beside requests that shared the connection in its life.
type wireBoundError struct{ bound, max, beside int64 }

func (e wireBoundError) Error() string {
	with := ""
	if e.beside > 0 {
		with = fmt.Sprintf(" and the %d others that shared the connection with it", e.beside)
	}
	return fmt.Sprintf("the server sent more than %d bytes on the connection for a body of at most %d bytes (net: {max_response_bytes})%s, the bound of an HTTP/2 response (%d times that, a byte of body with its frame and TLS record, plus 256 KiB), in frames that bring no body (empty DATA frames, padding) or too many others; the request was ended there",
		e.bound, e.max, with, 1+frameCost)
}

// wireConn is a connection that charges the bytes read from it to the
// requests it watches.
type wireConn struct {
	net.Conn
	mu      sync.Mutex
	watched map[*wireWatch]struct{}
}

// wireWatch is a request's charge: the bytes read in its life, and
// allowed, the bounds of the requests that shared the connection then
// (beside of them, its own not counted); end ends the request once read
// passes allowed.
type wireWatch struct {
	c                     *wireConn
	bound, max            int64
	read, allowed, beside int64
	end                   context.CancelCauseFunc
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.charge(int64(n))
	}
	return n, err
}

// charge counts n bytes read for each request watched.
func (c *wireConn) charge(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for w := range c.watched {
		if w.read += n; w.read > w.allowed {
			delete(c.watched, w)
			w.end(wireBoundError{bound: w.allowed, max: w.max, beside: w.beside})
		}
	}
}

// watchWire charges the reads of conn, a connection the transport got
// for a request, to that request if it is HTTP/2 over a wireConn, ending
// it past wireBound(max) and the bounds of the requests beside it; nil if
// it is not.
func watchWire(conn net.Conn, max int64, end context.CancelCauseFunc) *wireWatch {
	tc, ok := conn.(*tls.Conn)
	if !ok || tc.ConnectionState().NegotiatedProtocol != "h2" {
		return nil
	}
	c, ok := tc.NetConn().(*wireConn)
	if !ok {
		return nil
	}
	w := &wireWatch{c: c, bound: wireBound(max), max: max, allowed: wireBound(max), end: end}
	c.mu.Lock()
	if c.watched == nil {
		c.watched = map[*wireWatch]struct{}{}
	}
	for o := range c.watched {
		o.allowed += w.bound
		o.beside++
		w.allowed += o.bound
		w.beside++
	}
	c.watched[w] = struct{}{}
	c.mu.Unlock()
	return w
}

// stop ends the charge of w's request.
func (w *wireWatch) stop() {
	w.c.mu.Lock()
	delete(w.c.watched, w)
	w.c.mu.Unlock()
}
