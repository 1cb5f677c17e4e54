package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// A server that takes the connection and never answers the TLS
// ClientHello has the handshake end with the dial, inside its deadline:
// when the grant's timeout ends the request, and at once when the call
// is cancelled (where the handshake went on to the request's deadline),
// its connection closed by the host either way. The handshake's own
// bound (the transport's TLSHandshakeTimeout, 10 s) ends it only where
// it is sooner, saying so.
func TestTLSHandshakeEndsWithItsDial(t *testing.T) {
	for _, tc := range []struct {
		name      string
		timeout   time.Duration
		handshake time.Duration // the transport's bound
		cancel    bool
		want      string
		cause     error // of the dial's context
	}{
		{"the grant's timeout", time.Second, time.Hour, false, "no connection within 1s (net: {timeout})", errGrantTimeout},
		{"the call cancelled", 10 * time.Second, time.Hour, true, "cancelled while its connection was being made (" + errCallStopped.Error() + ")", errCallStopped},
		{"the handshake's own bound, sooner", time.Hour, time.Second, false, "was not done within 1s, the bound of a handshake", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			hello, closed := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(closed)
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				if _, err := c.Read(make([]byte, 1)); err == nil { // the ClientHello has come
					close(hello)
					io.Copy(io.Discard, c) // until the client closes the connection
				}
			}()
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			addr := "localhost:" + port
			dialCtx := make(chan context.Context, 1)
			dns := resolverFunc(func(ctx context.Context, _, _ string) ([]netip.Addr, error) {
				dialCtx <- ctx
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			})
			g, err := New(Rules{Allow: []string{addr}, Timeout: tc.timeout, Resolver: dns})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			g.transport.TLSHandshakeTimeout = tc.handshake
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tc.cancel {
				go func() {
					<-hello
					cancel(errCallStopped)
				}()
			}
			_, err = g.Call().RoundTrip(ctx, get("https://"+addr+"/"))
			if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want not sent, saying %q", err, tc.want)
			}
			<-closed // the host closed the connection
			dc := <-dialCtx
			<-dc.Done()
			if cause := context.Cause(dc); !errors.Is(cause, tc.cause) {
				t.Errorf("the dial, its handshake with it, ended by %v, not by %v", cause, tc.cause)
			}
		})
	}
}
