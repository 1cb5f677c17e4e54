package netguard

import (
	"bytes"
	"io"
	"net/http"
)

// net/http's Transport sends a request again, on its own, when a
// connection it reused fails before the answer came, if it takes the
// request to be replayable: one of GET, HEAD, OPTIONS and TRACE, or one
// with an Idempotency-Key or X-Idempotency-Key header, whose body is none
// or can be had again (GetBody). The journal records each request once,
// before it is sent: a request sent twice would be a request the remote
// side saw twice and the journal once. So no request is given to the
// transport as replayable (its documented rule: it retries only a request
// that "either has no body or has its Request.GetBody defined", on a
// connection "already used successfully"):
//
//   - a body is given without GetBody, with its length;
//   - no body, for a method that usually has none (GET, HEAD, DELETE,
//     OPTIONS...), is an empty body without GetBody: net/http finds it
//     empty before it writes the request, and sends it with no body, as
//     before;
//   - no body, for another method, where the transport would replay the
//     request (TRACE, or a header asking for idempotency), goes on a
//     connection of its own (the guard's once transport): a connection
//     never reused is never retried on.
//
// A request on a reused connection that failed is so an error the tool is
// told, recorded as failed: it may have reached the remote side.

// prepare gives hr the body b so that the transport does not send it
// again, and returns the transport to send it with.
func (g *Guard) prepare(hr *http.Request, b []byte) *http.Transport {
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
