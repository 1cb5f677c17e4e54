package netguard

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// An HTTP/1.1 connection kept alive is safe to reuse for the requests of
// one grant to one host: the transport is the guard's own, so no other
// grant or agent shares it, and the secrets a request carries are those
// of its host and port, the same on every request the connection takes.
// What is not safe is net/http's way with bytes a server writes that
// answer no request: it logs up to 4 KiB of them on the process's
// standard error ("Unsolicited response received on idle HTTP channel
// starting with ..."), where the host cannot hide a secret a server
// echoes in them. So the transport reads every HTTP/1.1 connection whose
// requests carry a secret through a framedConn, which gives it the bytes
// of the answers to its requests and none past them.

// errUnsolicited ends a connection whose server wrote what answers no
// request: given to the transport as io.EOF, the connection is closed,
// not kept, and none of what the server wrote is read or logged.
var errUnsolicited = io.EOF

// framedConn is an HTTP/1.1 connection that gives its reader the bytes of
// answers only. It reads each answer itself first, with net/http's own
// parser (http.ReadResponse, which the transport uses too) over a buffer
// of its own, and gives the transport the bytes that parser took: the
// transport's buffer never holds a byte past an answer's end, so it has
// nothing to log. A server that writes past an answer (or while no
// request waits for one) has its connection ended: the transport is told
// io.EOF with the answer's last bytes, and does not reuse it.
type framedConn struct {
	net.Conn
	in  *bufio.Reader // over raw: what the parser reads
	raw rawReader     // the bytes read from the connection not yet given
	// resp is the answer whose body is read; read its body's bytes
	// so far.
	resp *http.Response
	read int64
	// err is given once the bytes before it are.
	err error

	mu     sync.Mutex
	st     frameState
	asked  bool   // a request was written since the last answer ended
	method string // its method: the answer to a HEAD has no body
}

type frameState int

const (
	frameIdle    frameState = iota // no answer being read
	frameHead                      // reading an answer's head
	frameBody                      // reading its body
	frameThrough                   // the connection ends with this answer: all its bytes go through
)

// maxFramedHead bounds the heads of one answer (1xx ones included) that
// framedConn reads before it lets all through: past the transport's own
// bound (MaxHeaderBytes), which so refuses them first.
const maxFramedHead = 2 * MaxHeaderBytes

func newFramedConn(c net.Conn) *framedConn {
	f := &framedConn{Conn: c}
	f.raw.r = c
	f.in = bufio.NewReader(&f.raw)
	return f
}

// rawReader keeps what it reads from r until it is given.
type rawReader struct {
	r    io.Reader
	kept []byte
	// bounded: it reads left bytes more at most.
	bounded bool
	left    int64
}

var errHeadTooLong = errors.New("the answer's head is past its bound")

func (r *rawReader) Read(p []byte) (int, error) {
	if r.bounded {
		if r.left <= 0 {
			return 0, errHeadTooLong
		}
		p = p[:min(int64(len(p)), r.left)]
	}
	n, err := r.r.Read(p)
	r.kept = append(r.kept, p[:n]...)
	r.left -= int64(n)
	return n, err
}

// Write marks the start of a request, and its method, when it is the
// first write since the last answer ended.
func (c *framedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.asked {
		c.asked = true
		c.method = ""
		if m, _, ok := bytes.Cut(p, []byte(" ")); ok {
			c.method = string(m)
		}
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *framedConn) Read(p []byte) (int, error) {
	for {
		if n := c.give(p); n > 0 {
			if len(c.raw.kept) == c.in.Buffered() && c.err != nil {
				return n, c.err // with the last bytes: the transport keeps no connection that ended
			}
			return n, nil
		}
		if c.err != nil {
			return 0, c.err
		}
		c.err = c.step()
	}
}

// give copies to p what the parser has taken and the transport has not
// been given.
func (c *framedConn) give(p []byte) int {
	ready := len(c.raw.kept) - c.in.Buffered()
	n := copy(p, c.raw.kept[:ready])
	c.raw.kept = c.raw.kept[n:]
	if len(c.raw.kept) == 0 {
		c.raw.kept = nil
	}
	return n
}

// step reads on: the next answer's head, or a part of its body.
func (c *framedConn) step() error {
	c.mu.Lock()
	st := c.st
	c.mu.Unlock()
	switch st {
	case frameIdle:
		if _, err := c.in.Peek(1); err != nil {
			return err
		}
		c.mu.Lock()
		asked := c.asked
		if asked {
			c.st = frameHead
		}
		c.mu.Unlock()
		if !asked {
			c.Conn.Close()
			return errUnsolicited
		}
	case frameHead:
		return c.readHead()
	case frameBody:
		return c.readBody()
	case frameThrough:
		if c.in.Buffered() == 0 {
			if _, err := c.in.Peek(1); err != nil {
				return err
			}
		}
		c.in.Discard(c.in.Buffered())
	}
	return nil
}

// readHead reads an answer's head: a 1xx one is followed by another; a
// final one's body is read next, but for an answer that ends its
// connection, or that the parser refuses, whose bytes all go through, so
// that the transport meets what the parser met.
func (c *framedConn) readHead() error {
	if !c.raw.bounded {
		c.raw.bounded, c.raw.left = true, maxFramedHead
	}
	c.mu.Lock()
	method := c.method
	c.mu.Unlock()
	resp, err := http.ReadResponse(c.in, &http.Request{Method: method})
	switch {
	case err != nil, resp.StatusCode == http.StatusSwitchingProtocols, resp.Close:
		c.raw.bounded = false
		c.setState(frameThrough)
	case resp.StatusCode < 200:
	default:
		c.raw.bounded = false
		c.resp, c.read = resp, 0
		c.setState(frameBody)
		if resp.Body == http.NoBody {
			return c.ended()
		}
	}
	return nil
}

// readBody reads a part of the answer's body.
func (c *framedConn) readBody() error {
	var buf [4096]byte
	n, err := c.resp.Body.Read(buf[:])
	c.read += int64(n)
	if err == nil && c.read == c.resp.ContentLength {
		_, err = c.resp.Body.Read(buf[:0]) // io.EOF, now: the transport has the whole body once given it
	}
	switch {
	case err == io.EOF:
		return c.ended()
	case err != nil:
		c.setState(frameThrough)
	}
	return nil
}

// ended is the end of an answer: the connection waits for the next
// request, or ends if its server wrote past the answer.
func (c *framedConn) ended() error {
	c.resp = nil
	if c.in.Buffered() > 0 {
		c.Conn.Close()
		return errUnsolicited
	}
	c.mu.Lock()
	c.st, c.asked = frameIdle, false
	c.mu.Unlock()
	return nil
}

func (c *framedConn) setState(st frameState) {
	c.mu.Lock()
	c.st = st
	c.mu.Unlock()
}

// dialFramed is dial, the connection read through a framedConn if its
// requests carry a secret.
func (g *Guard) dialFramed(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := g.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return g.framed(c, addr), nil
}

// framed is c read through a framedConn if the requests to addr (a
// "host:port" the guard admitted) carry a secret: what a server writes
// past its answers on another is logged as net/http logs it, as it holds
// no secret of the guard.
func (g *Guard) framed(c net.Conn, addr string) net.Conn {
	host, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	for _, s := range g.secrets {
		if s.matches(strings.ToLower(host), port) {
			return newFramedConn(c)
		}
	}
	return c
}

// dialTLS is t's way to dial https: dial, then the TLS handshake with the
// transport's TLS settings; a connection that chose HTTP/2 is given as it
// is (HTTP/2 logs nothing a server sends), one of HTTP/1.1 as framed
// gives it.
func (g *Guard) dialTLS(t *http.Transport) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ctx, cancel := g.dialBy(ctx)
		defer cancel()
		c, err := g.dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c = &wireConn{Conn: c} // counts what HTTP/2 reads (wire.go)
		cfg := &tls.Config{}
		if t.TLSClientConfig != nil {
			cfg = t.TLSClientConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		tc := tls.Client(c, cfg)
		// net/http dials on when the request has ended: the dial's
		// context (dialBy), which ends with the request, ends the
		// handshake too, so that a server that never answers it holds
		// no connection past the request; the transport's own bound
		// ends it only where that is sooner.
		hctx, bound := ctx, t.TLSHandshakeTimeout
		if bound > 0 && time.Now().Add(bound).Before(dialDeadline(ctx)) {
			var hcancel context.CancelFunc
			hctx, hcancel = context.WithTimeout(ctx, bound)
			defer hcancel()
		}
		if err := tc.HandshakeContext(hctx); err != nil {
			c.Close()
			if ctx.Err() == nil && hctx.Err() != nil {
				return nil, fmt.Errorf("the TLS handshake with %s was not done within %s, the bound of a handshake (the server took the connection and did not complete it)", addr, bound)
			}
			return nil, err
		}
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			return tc, nil
		}
		return g.framed(tc, addr), nil
	}
}
