package netguard

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// h1Answer is what a raw HTTP/1.1 server over TLS does after it read a
// request whole: it writes to tc, or to raw, the TCP connection under it.
type h1Answer func(raw net.Conn, tc *tls.Conn)

// rawH1Server is an HTTP/1.1 server over TLS that counts the requests it
// reads and answers each by answer, then closes the connection; pool
// trusts its certificate.
func rawH1Server(t *testing.T, answer h1Answer) (addr string, pool *x509.CertPool, seen *atomic.Int32) {
	t.Helper()
	cert := httptest.NewUnstartedServer(nil)
	cert.StartTLS() // for its certificate
	t.Cleanup(cert.Close)
	pool = x509.NewCertPool()
	pool.AddCert(cert.Certificate())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	seen = &atomic.Int32{}
	conf := &tls.Config{Certificates: cert.TLS.Certificates, NextProtos: []string{"http/1.1"}}
	go func() {
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer raw.Close()
				tc := tls.Server(raw, conf)
				req, err := http.ReadRequest(bufio.NewReader(tc))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				seen.Add(1)
				answer(raw, tc)
			}()
		}
	}()
	return ln.Addr().String(), pool, seen
}

// Regression: a request whose server closed the connection before it
// answered, over HTTP/2 with no GOAWAY (on a fresh connection or on one
// kept alive), or over HTTP/1.1 within the answer's head or a TLS record
// of it, had the tool told "unexpected EOF" (or "net/http: HTTP/1.x
// transport connection broken: unexpected EOF") alone. The tool is told
// that the server closed the connection before it answered, that the
// request may have reached the remote side, which may have acted on it,
// and that it may be sent again if the remote side may take it twice; it
// was sent once, and is taken neither for not sent nor for not processed.
func TestServerThatClosesTheConnectionBeforeAnsweringIsSaidSo(t *testing.T) {
	const (
		advice   = ": the request may have reached the remote side, which may have acted on it; it was not sent again: send it again, as a request of its own, if the remote side may take it twice"
		noGoAway = "no response: before it answered, the server closed the connection%s with no HTTP/2 GOAWAY to say which requests it had processed (RFC 9113, section 6.8)" + advice
		inHead   = "no response: the server closed the connection in the middle of what it was sending, before an answer's head came whole" + advice
	)
	closeIt := func(frame func(byte, byte, uint32, []byte), _ uint32) { frame(closeConn, 0, 0, nil) }
	answerThenClose := func(frame func(byte, byte, uint32, []byte), stream uint32) {
		if stream == 1 {
			frame(1, 5, stream, []byte{0x88}) // HEADERS, END_STREAM, END_HEADERS: :status 200
			return
		}
		frame(closeConn, 0, 0, nil)
	}
	for _, tc := range []struct {
		name  string
		h2    h2Answer
		h1    h1Answer
		first bool // a request answered first, on the same connection
		want  string
	}{
		{name: "HTTP/2, closed", h2: closeIt, want: strings.Replace(noGoAway, "%s", "", 1)},
		{name: "HTTP/2, closed as it was reused", h2: answerThenClose, first: true,
			want: strings.Replace(noGoAway, "%s", ", kept alive since its answer to an earlier request,", 1)},
		{name: "HTTP/1.1, closed within the head", h1: func(_ net.Conn, tc *tls.Conn) {
			io.WriteString(tc, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
			tc.Close()
		}, want: inHead},
		{name: "HTTP/1.1, closed within a TLS record", h1: func(raw net.Conn, _ *tls.Conn) {
			raw.Write([]byte{23, 3, 3, 0, 64, 1, 2, 3}) // application data, 64 bytes promised, 3 sent
		}, want: inHead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var addr string
			var pool *x509.CertPool
			var seen *atomic.Int32
			if tc.h2 != nil {
				addr, pool, seen = rawH2Server(t, tc.h2)
			} else {
				addr, pool, seen = rawH1Server(t, tc.h1)
			}
			for _, req := range []*sandbox.NetRequest{
				{Method: "POST", URL: "https://" + addr + "/order", Body: []byte("an order")},
				{Method: "GET", URL: "https://" + addr + "/order"},
			} {
				g, err := New(Rules{Allow: []string{addr}, Methods: []string{"GET", "POST"}, Timeout: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				trust(g, pool)
				if tc.first {
					if _, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/"}); err != nil {
						t.Fatalf("%s: the first request: %v", req.Method, err)
					}
				}
				seen.Store(0)
				_, err = g.Call().RoundTrip(context.Background(), req)
				if err == nil || err.Error() != tc.want {
					t.Errorf("%s: %v\nwant %q", req.Method, err, tc.want)
				}
				if errors.Is(err, ErrNotSent) || errors.Is(err, ErrNotProcessed) {
					t.Errorf("%s: taken as not sent (%v) or not processed (%v)", req.Method, errors.Is(err, ErrNotSent), errors.Is(err, ErrNotProcessed))
				}
				if n := seen.Load(); n != 1 {
					t.Errorf("%s: the server saw it %d times", req.Method, n)
				}
			}
		})
	}
}
