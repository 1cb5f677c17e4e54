package netguard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cairnrun/cairn/internal/plural"
)

// errGrantTimeout is the cause of a request's context when the grant's
// timeout ends it: the call's own time limit ends it with another.
var errGrantTimeout = errors.New("the network grant's timeout")

// connTrace knows whether a request may have reached its peer: not
// before the transport obtained a connection for it (GotConn, HTTP/1 and
// HTTP/2 alike), which it does before it writes a byte of the request;
// a TLS handshake that fails fails before. Once a connection was
// obtained, the request counts as sent, even if the transport failed
// before it wrote to it: when in doubt, a request was sent.
//
// It also charges the bytes an HTTP/2 connection reads to the request
// (watchWire), once it has max, its body's bound, and end.
type connTrace struct {
	got    atomic.Bool
	reused atomic.Bool // the connection obtained had answered a request before
	h2     atomic.Bool // the connection obtained is HTTP/2's
	max    int64
	end    context.CancelCauseFunc
	wire   atomic.Pointer[wireWatch]
}

// trace is ctx with the hook that marks the connection obtained.
func (t *connTrace) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			t.got.Store(true)
			t.reused.Store(info.Reused)
			tc, ok := info.Conn.(*tls.Conn)
			t.h2.Store(ok && tc.ConnectionState().NegotiatedProtocol == "h2")
			if t.end != nil {
				if old := t.wire.Swap(watchWire(info.Conn, t.max, t.end)); old != nil {
					old.stop() // a connection got before, for a request not sent on it
				}
			}
		},
	})
}

// done stops charging the connection's bytes to the request.
func (t *connTrace) done() {
	if w := t.wire.Load(); w != nil {
		w.stop()
	}
}

// sent reports whether any of the request may have reached the peer.
func (t *connTrace) sent() bool { return t.got.Load() }

// unanswered is err, the transport's error for a request it sent (no
// answer's head was read), said plainly when the server closed the
// connection, or reset it, without answering: net/http says "EOF" alone;
// or "unexpected EOF", alone or quoted, for a connection closed with no
// HTTP/2 GOAWAY (before it answered, else the body is cut short:
// cutshort.go), or over HTTP/1 within the answer's head or a TLS record.
// t.reused says whether the connection had answered a request before: a
// server that ends a connection kept alive as it is reused closes it so,
// and net/http would send a GET again on a fresh connection, which the
// host does not (replay.go).
func (t *connTrace) unanswered(err error) error {
	reused := t.reused.Load()
	kept := ""
	if reused {
		kept = ", kept alive since its answer to an earlier request,"
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) && t.h2.Load():
		return h2Break{what: "the server closed the connection" + kept + " with no HTTP/2 GOAWAY to say which requests it had processed (RFC 9113, section 6.8)"}.unanswered()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("no response: the server closed the connection%s in the middle of what it was sending, before an answer's head came whole: the request may have reached the remote side, which may have acted on it; it was not sent again: send it again, as a request of its own, if the remote side may take it twice", kept)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		return err
	}
	how := "the server closed the connection without answering"
	if reused {
		how = "the server closed the connection, kept alive since its answer to an earlier request, without answering this one (as a server does that ends an idle connection just as it is reused)"
	}
	return fmt.Errorf("no response: %s (%w); it was not sent again, and may have reached the remote side: send it again, as a request of its own, if the remote side may take it twice", how, err)
}

// sendError says why sending failed: a refusal; a request that was not
// sent (ErrNotSent); the time limit that ran out, the grant's timeout or
// the call's own; the request's cancellation; or the transport's own
// error.
func sendError(ctx context.Context, err error, r Rules, sent bool) error {
	if errors.Is(err, ErrRefused) {
		return err
	}
	waited := "no response"
	if !sent {
		waited = "no connection"
	}
	var wire wireBoundError
	switch {
	case errors.As(context.Cause(ctx), &wire):
		err = fmt.Errorf("%w: %w", wire, err)
	case errors.Is(context.Cause(ctx), errGrantTimeout):
		err = fmt.Errorf("%s within %s (net: {timeout}): %w", waited, orDefault(r.Timeout, DefaultTimeout), err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("%s within the call's time limit (limits: {timeout} in the agent file; --timeout for cairn exec): %w", waited, err)
	case ctx.Err() != nil:
		err = cancelled(ctx, err, sent)
	case !sent:
		err = fmt.Errorf("%s: %w", waited, err)
	default:
		if reset, ok := peerReset(err); ok {
			err = reset.unanswered()
		} else if gone, ok := goneAway(err); ok {
			err = gone
		} else if broken, ok := brokenH2(err); ok {
			err = broken.unanswered()
		} else if why, ok := notSentAgain(err); ok {
			err = fmt.Errorf("no response: the server ended the request unanswered (%s); it was not sent again, and may have reached the remote side", why)
		}
	}
	if !sent {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return err
}

// cancelled is err, that of a request whose context, ctx, was cancelled
// (its call stopped), saying so, and why, and what became of the request:
// cancelled while its connection was being made, the connection was given
// up with it, and nothing of it was sent; after, it may have reached the
// remote side.
func cancelled(ctx context.Context, err error, sent bool) error {
	if cause := context.Cause(ctx); cause.Error() != err.Error() {
		err = fmt.Errorf("%v: %w", cause, err)
	}
	if !sent {
		return fmt.Errorf("no connection: the request was cancelled while its connection was being made (%w), and the connection was given up with it; nothing of the request was sent", err)
	}
	return fmt.Errorf("no response: the request was cancelled before its answer came whole (%w); it may have reached the remote side", err)
}

// bodyStopped is err, that of a response body whose request's context,
// ctx, ended before the body came whole, saying which limit ended it,
// or its cancellation, how much of it came (n bytes; counted is false
// for a read that was left, errLeft), and that the request reached the
// remote side, which answered status: where "no response" alone hid
// that an answer had begun.
func bodyStopped(ctx context.Context, err error, r Rules, status int, n int64, counted bool) error {
	var wire wireBoundError
	if errors.As(context.Cause(ctx), &wire) {
		return sendError(ctx, err, r, true)
	}
	how := fmt.Sprintf("before the request was cancelled (%v)", context.Cause(ctx))
	switch {
	case errors.Is(context.Cause(ctx), errGrantTimeout):
		how = fmt.Sprintf("within %s (net: {timeout})", orDefault(r.Timeout, DefaultTimeout))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		how = "within the call's time limit (limits: {timeout} in the agent file; --timeout for cairn exec)"
	}
	came := plural.Count(n, "byte") + " of it came, and the tool is not given " + plural.Of(n, "it", "them")
	if !counted {
		came = err.Error()
	}
	return fmt.Errorf("the body did not come whole %s: %s; the request reached the remote side, which answered %d: send it again, as a request of its own, if the remote side may take it twice",
		how, came, status)
}

// notSentAgain finds in err the HTTP/2 transport's word that it did not
// send a request again after the server reset its stream or went away
// (replay.go), which goes on to advise the caller on net/http's API, and
// returns what the server did.
func notSentAgain(err error) (string, bool) {
	const head, tail = "http2: Transport: cannot retry err [", "] after Request.Body was written"
	text := err.Error()
	i := strings.Index(text, head)
	if i < 0 {
		return "", false
	}
	why, _, ok := strings.Cut(text[i+len(head):], tail)
	return why, ok
}
