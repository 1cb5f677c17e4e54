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
// apart by stream under TLS: each read is charged to the requests in
// flight on the connection in equal shares. A response is so charged its
// own bytes, or at most an equal share of those of requests beside it,
// each within its own bound.

// wireBound is the most bytes on the connection that an HTTP/2 response
// with a body of at most max bytes may take: the body eight times over
// (a frame's header is 9 bytes and a TLS record's about 22, so a stream
// of events of 9 bytes, each a frame and a record of its own, takes about
// four and a half times its body), and the headers (MaxHeaderBytes) four
// times over for the headers, the connection's settings, pings and window
// updates.
func wireBound(max int64) int64 { return 8*max + 4*MaxHeaderBytes }

// wireBoundError ends a request whose response passed its wireBound.
type wireBoundError struct{ bound, max int64 }

func (e wireBoundError) Error() string {
	return fmt.Sprintf("the server sent more than %d bytes on the connection for a body of at most %d bytes (net: {max_response_bytes}), the bound of an HTTP/2 response (8 times that, plus 256 KiB), in frames that bring no body (empty DATA frames, padding) or too many others; the request was ended there",
		e.bound, e.max)
}

// wireConn is a connection that charges the bytes read from it to the
// requests it watches.
type wireConn struct {
	net.Conn
	mu      sync.Mutex
	watched map[*wireWatch]struct{}
}

// wireWatch is a request's charge: left bytes more, and end, which ends
// the request with err once it is charged past them.
type wireWatch struct {
	c    *wireConn
	left int64
	end  context.CancelCauseFunc
	err  error
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.charge(int64(n))
	}
	return n, err
}

// charge shares n bytes read between the requests watched.
func (c *wireConn) charge(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := int64(len(c.watched))
	for w := range c.watched {
		if w.left -= (n + k - 1) / k; w.left < 0 {
			delete(c.watched, w)
			w.end(w.err)
		}
	}
}

// watchWire charges the reads of conn, a connection the transport got
// for a request, to that request if it is HTTP/2 over a wireConn, ending
// it past wireBound(max); nil if it is not.
func watchWire(conn net.Conn, max int64, end context.CancelCauseFunc) *wireWatch {
	tc, ok := conn.(*tls.Conn)
	if !ok || tc.ConnectionState().NegotiatedProtocol != "h2" {
		return nil
	}
	c, ok := tc.NetConn().(*wireConn)
	if !ok {
		return nil
	}
	w := &wireWatch{c: c, left: wireBound(max), end: end, err: wireBoundError{bound: wireBound(max), max: max}}
	c.mu.Lock()
	if c.watched == nil {
		c.watched = map[*wireWatch]struct{}{}
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
