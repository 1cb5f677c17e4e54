package netguard

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"sync/atomic"
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
type connTrace struct {
	got atomic.Bool
}

// trace is ctx with the hook that marks the connection obtained.
func (t *connTrace) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { t.got.Store(true) },
	})
}

// sent reports whether any of the request may have reached the peer.
func (t *connTrace) sent() bool { return t.got.Load() }

// sendError says why sending failed: a refusal; a request that was not
// sent (ErrNotSent); the time limit that ran out, the grant's timeout or
// the call's own; or the transport's own error.
func sendError(ctx context.Context, err error, r Rules, sent bool) error {
	if errors.Is(err, ErrRefused) {
		return err
	}
	waited := "no response"
	if !sent {
		waited = "no connection"
	}
	switch {
	case errors.Is(context.Cause(ctx), errGrantTimeout):
		err = fmt.Errorf("%s within %s (net: {timeout}): %w", waited, orDefault(r.Timeout, DefaultTimeout), err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("%s within the call's time limit (limits: {timeout} in the agent file; --timeout for cairn exec): %w", waited, err)
	case !sent:
		err = fmt.Errorf("%s: %w", waited, err)
	}
	if !sent {
		return fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	return err
}
