package netguard

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
)

// net/http's Transport sends a request again, on its own, when a
// connection it reused fails before the answer came, if it takes the
// request to be replayable: one of GET, HEAD, OPTIONS and TRACE, or one
// with an Idempotency-Key or X-Idempotency-Key header, whose body is none
// or can be had again (GetBody). Its HTTP/2 transport sends again, on the
// same connection or a new one, any request whose body is none or can be
// had again, whatever its method, when the server resets its stream
// (PROTOCOL_ERROR, REFUSED_STREAM) or goes away (GOAWAY): a server that
// does so at every request would see a POST without a body hundreds of
// times, until the time limit ran out. The journal records each request once, before it is
// sent: a request sent twice would be a request the remote side saw twice
// and the journal once. So no request is given to the transport as
// replayable:
//
//   - a body is given without GetBody, with its length;
//   - no body, for a method that usually has none (GET, HEAD, DELETE,
//     OPTIONS...), is an empty body without GetBody: net/http finds it
//     empty before it writes the request, and sends it with no body, as
//     before;
//   - no body, for another method, is no body over HTTP/1.1 (so that it
//     is sent with "Content-Length: 0", not as an empty chunked body,
//     which some servers refuse), where the transport would replay it
//     only if it is TRACE or has a header asking for idempotency: those
//     go on a connection of their own (the guard's once transport), and a
//     connection never reused is never retried on;
//   - over HTTP/2, no body is an empty body without GetBody (sendOnceH2):
//     the request goes without a content-length, and with an empty DATA
//     frame that ends it, in place of a HEADERS frame that does (HTTP/2
//     needs neither), and is not sent again. (HTTP/2 sends
//     again only a request that was not sent: one that found its
//     connection closing before it was written.)
//
// A request on a reused connection that failed, or whose stream the
// server reset, is so an error the tool is told, recorded as failed: it
// may have reached the remote side.

// prepare gives hr the body b so that the transport does not send it
// again, and returns the transport to send it with.
func (g *Guard) prepare(hr *http.Request, b []byte) *http.Transport {
	g.mu.Lock()
	defer g.mu.Unlock()
	hr.GetBody = nil
	switch {
	case len(b) > 0:
		hr.Body, hr.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	case usuallyBodiless(hr.Method):
		hr.Body, hr.ContentLength = io.NopCloser(bytes.NewReader(nil)), 0
	default:
		hr.Body, hr.ContentLength = nil, 0
		if hr.Method == "TRACE" || hr.Header["Idempotency-Key"] != nil || hr.Header["X-Idempotency-Key"] != nil {
			return g.once
		}
	}
	return g.transport
}

// usuallyBodiless reports whether net/http sends a request of method
// whose body it finds empty with no body at all, as for a nil one.
func usuallyBodiless(method string) bool {
	switch method {
	case "GET", "HEAD", "DELETE", "OPTIONS", "PROPFIND", "SEARCH":
		return true
	}
	return false
}

// sendOnceH2 sets up t's HTTP/2 and returns, for another transport's
// TLSNextProto, its way to take over a connection that chose HTTP/2,
// giving each request without a body an empty one without GetBody, which
// the HTTP/2 transport does not send again (a request without a body it
// does; see above). t is that HTTP/2 transport's settings, and its idle
// connections are closed by t.CloseIdleConnections. With HTTP/2 turned
// off (GODEBUG=http2client=0) it returns nil.
//
// The HTTP/2 is t's, not the other transport's own, because net/http
// sends a request for https to the HTTP/2 it sets up on a transport
// before trying any other connection, past TLSNextProto: a transport
// whose TLSNextProto is set has none of its own, and all its requests
// take the way above.
func sendOnceH2(t *http.Transport) (func(string, *tls.Conn) http.RoundTripper, *http.Transport) {
	t.CloseIdleConnections() // sets up its HTTP/2, as its first use would
	up := t.TLSNextProto["h2"]
	if up == nil {
		return nil, nil
	}
	return func(authority string, c *tls.Conn) http.RoundTripper {
		rt := up(authority, c)
		if _, failed := rt.(interface{ RoundTripErr() error }); failed {
			return rt // net/http's own way to say the connection failed
		}
		return onceH2{rt}
	}, t
}

// onceH2 is an HTTP/2 connection's RoundTripper that sends no request
// twice. It keeps the connection for the next request whatever the
// request's Close says.
type onceH2 struct{ rt http.RoundTripper }

func (o onceH2) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.WithContext(r.Context())
	r.Close = false
	if r.Body == nil || r.Body == http.NoBody {
		r.Body, r.GetBody = io.NopCloser(bytes.NewReader(nil)), nil
	}
	return o.rt.RoundTrip(r)
}
