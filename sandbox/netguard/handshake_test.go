package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: a server that took the connection and never answered the
// TLS handshake had the request end with the grant's timeout, and the
// connection held for the transport's own 10 s bound past it: the
// transport dials on when the request has ended. The handshake ends with
// the grant's timeout, whatever the transport's own bound (here an hour).
func TestTLSHandshakeThatNeverEndsEndsWithTheGrantsTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c) // until the client closes the connection
			c.Close()
		}
		close(closed)
	}()
	addr := ln.Addr().String()
	g, err := New(Rules{Allow: []string{addr}, Timeout: time.Second, Secrets: []Secret{{Host: addr, Header: "Authorization", Value: hostileToken, Hide: []string{"tok-7e5d3c1b9a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.transport.TLSHandshakeTimeout = time.Hour
	_, err = g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/"})
	if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "no connection within 1s (net: {timeout})") {
		t.Fatalf("%v", err)
	}
	<-closed // the host closed the connection
}
