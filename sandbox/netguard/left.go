package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"time"
)

// net/http ends a request when its context ends: at once, or as soon as
// what it waits on notices. Not always: an HTTP/2 server that sends a
// WINDOW_UPDATE taking a stream's window past the largest HTTP/2 allows
// (2^31-1) stops net/http's HTTP/2 client (as of Go 1.26) for good: it
// locks the connection, and locks it again to reset the stream, so that
// neither the request nor anything else on the connection (its Close,
// the pool's next request, the transport's CloseIdleConnections) ever
// returns. So the host waits for net/http no longer than its request:
// once the request's context has ended, net/http has leaveAfter to end
// it, and past that the request is left to it, and with it the
// transports, which the guard replaces with new ones (leave); a response
// body that does not close within leaveAfter likewise (close): a server
// a grant allows cannot hold a call, or the guard's next request, past
// their time.

// leaveAfter is how long net/http has, once a request's context has
// ended, to end the request before it is left.
const leaveAfter = 2 * time.Second

// errLeft is a request that net/http did not end when its context did.
var errLeft = errors.New("the host's HTTP client did not end the request when told to (as an HTTP/2 server that breaks the protocol, by a WINDOW_UPDATE past the largest window a stream may have, makes it): the request and its connection were left, and the grant's next request takes a connection of its own")

// roundTrip is t.RoundTrip(hr), hr's context ctx, given up leaveAfter
// once ctx has ended, with errLeft.
func (g *Guard) roundTrip(ctx context.Context, t *http.Transport, hr *http.Request) (*http.Response, error) {
	type answer struct {
		resp *http.Response
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := t.RoundTrip(hr)
		done <- answer{resp, err}
	}()
	if a, ok := waitFor(ctx, done); ok {
		return a.resp, a.err
	}
	g.leave(t)
	go func() {
		if a := <-done; a.resp != nil {
			a.resp.Body.Close()
		}
	}()
	return nil, errLeft
}

// readBody reads body, that of a response t brought, whole, up to max+1
// bytes, and closes it when ctx ends: so that no read outlives the
// request's time limits or its call, whatever body the transport handed
// back (it stops watching the context of some, a protocol switch's among
// them). A read that closing the body does not end is given up
// leaveAfter once ctx has ended, with errLeft.
func (g *Guard) readBody(ctx context.Context, t *http.Transport, body io.ReadCloser, max int64) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	stop := context.AfterFunc(ctx, func() { body.Close() })
	defer stop()
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(body, max+1))
		done <- read{b, err}
	}()
	if r, ok := waitFor(ctx, done); ok {
		return r.b, r.err
	}
	g.leave(t)
	return nil, errLeft
}

// close closes body, that of a response t brought, waiting leaveAfter
// at most: past that, t is left, as a read would be (readBody).
func (g *Guard) close(t *http.Transport, body io.Closer) {
	done := make(chan struct{})
	go func() {
		body.Close()
		close(done)
	}()
	timer := time.NewTimer(leaveAfter)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		g.leave(t)
	}
}

// waitFor is what done brings, waiting for it until ctx has ended and
// leaveAfter more; false if it came not.
func waitFor[T any](ctx context.Context, done <-chan T) (T, bool) {
	select {
	case v := <-done:
		return v, true
	case <-ctx.Done():
	}
	timer := time.NewTimer(leaveAfter)
	defer timer.Stop()
	select {
	case v := <-done:
		return v, true
	case <-timer.C:
		var zero T
		return zero, false
	}
}

// leave replaces the guard's transports, t among them, with new ones of
// the same settings, and keeps the old ones to close, without waiting
// for them, when the guard is closed: net/http did not end a request of
// t's, and what it holds may never return.
func (g *Guard) leave(t *http.Transport) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t != g.transport && t != g.once {
		return // left already
	}
	g.left = append(g.left, g.transport, g.once)
	g.left = append(g.left, g.h2...)
	old := []*http.Transport{g.transport, g.once}
	g.h2 = nil
	g.transport, g.once = g.newTransport(true), g.newTransport(false)
	for i, nt := range []*http.Transport{g.transport, g.once} {
		nt.TLSHandshakeTimeout = old[i].TLSHandshakeTimeout
		if c := old[i].TLSClientConfig; c != nil {
			if nt.TLSClientConfig == nil { // no HTTP/2 (GODEBUG=http2client=0)
				nt.TLSClientConfig = &tls.Config{}
			}
			nt.TLSClientConfig.RootCAs = c.RootCAs
		}
	}
}
