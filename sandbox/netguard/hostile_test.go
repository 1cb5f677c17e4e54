package netguard

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// hostileToken is a secret whose token, as the host takes it from
// "Bearer ${TOKEN}", is tok-7e5d3c1b9a.
const hostileToken = "Bearer tok-7e5d3c1b9a"

// hostileServer is a loopback server that reads each request on a
// connection and answers it with act, but for a request for /ok, which
// it answers "ok". done has a value for each connection act had once its
// client has closed it; gone, given to act, is closed then.
func hostileServer(t *testing.T, act func(c net.Conn, req *http.Request, gone <-chan struct{})) (addr string, done <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	closed := make(chan struct{}, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if req.URL.Path == "/ok" {
						fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
						continue
					}
					gone := make(chan struct{})
					go func() {
						io.Copy(io.Discard, br) // until the client closes the connection
						close(gone)
						closed <- struct{}{}
					}()
					act(c, req, gone)
					<-gone
					return
				}
			}()
		}
	}()
	return ln.Addr().String(), closed
}

// gzipBomb is gzip of n zero bytes.
func gzipBomb(n int) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(make([]byte, n))
	zw.Close()
	return b.Bytes()
}

// A hostile server, over real loopback HTTP: each of its tricks ends
// within the grant's bounds with an error that says what happened, the
// secret in none of it, its connection closed, and the guard's next
// request answered.
func TestHostileServers(t *testing.T) {
	bomb := gzipBomb(64 << 20)
	for _, tc := range []struct {
		name string
		act  func(c net.Conn, req *http.Request, gone <-chan struct{})
		want string // in the error
	}{
		{"hangs after its headers", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
			<-gone
		}, "the body did not come whole within 1s (net: {timeout}): 0 bytes of it came"},
		{"hangs before its headers end", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Echo: %s\r\n", req.Header.Get("Authorization"))
			<-gone
		}, "no response within 1s (net: {timeout})"},
		{"trickles its body a byte a second", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
			for _, b := range []byte(req.Header.Get("Authorization")) {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(time.Second / 4)
			}
		}, "the body did not come whole within 1s (net: {timeout})"},
		{"hangs in a chunk", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc")
			<-gone
		}, "the body did not come whole within 1s (net: {timeout}): 3 bytes of it came, and the tool is not given them; the request reached the remote side, which answered 200"},
		{"sends endless headers", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\n")
			for {
				if _, err := fmt.Fprintf(c, "X-Echo: %s\r\n", req.Header.Get("Authorization")); err != nil {
					return
				}
			}
		}, "headers exceeded"},
		{"sends one huge header", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Huge: %s%s\r\n\r\n", req.Header.Get("Authorization"), strings.Repeat("a", 1<<20))
		}, "headers exceeded"},
		{"floods 1xx answers", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			for {
				if _, err := fmt.Fprint(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
					return
				}
			}
		}, "headers exceeded"},
		{"sends a bogus chunk size", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%s\r\nabc\r\n0\r\n\r\n", req.Header.Get("Authorization"))
		}, "invalid byte in chunk length"},
		{"sends a chunk size past any bound", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n")
			for {
				if _, err := c.Write(bytes.Repeat([]byte("x"), 4096)); err != nil {
					return
				}
			}
		}, "larger than 1024 bytes (net: {max_response_bytes})"},
		{"sends a body past the bound", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n")
			c.Write(make([]byte, 10<<20))
		}, "larger than 1024 bytes (net: {max_response_bytes})"},
		{"sends endless body with no length", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
			for {
				if _, err := c.Write(bytes.Repeat([]byte(req.Header.Get("Authorization")), 100)); err != nil {
					return
				}
			}
		}, "larger than 1024 bytes (net: {max_response_bytes})"},
		{"sends a gzip bomb", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", len(bomb))
			c.Write(bomb)
		}, "larger than 1024 bytes (net: {max_response_bytes})"},
		{"speaks HTTP/2 without being asked (h2c)", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			// the preface's SETTINGS frame, then GOAWAY, as an h2c server
			// answers what is not HTTP/2
			c.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
			fmt.Fprintf(c, "%s\n", req.Header.Get("Authorization"))
			c.(*net.TCPConn).CloseWrite()
		}, "malformed HTTP"},
		{"echoes the secret in a malformed status line", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprintf(c, "HTTP/1.1 %s\r\n\r\n", req.Header.Get("Authorization"))
		}, "malformed HTTP status code"},
		{"answers 101 and holds the connection", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprint(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
			<-gone
		}, "did not ask to switch protocols"},
		{"closes before its body ends", func(c net.Conn, req *http.Request, gone <-chan struct{}) {
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n%s", req.Header.Get("Authorization"))
			c.(*net.TCPConn).CloseWrite()
		}, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, closed := hostileServer(t, tc.act)
			g, err := New(Rules{Allow: []string{addr}, Timeout: time.Second, MaxResponseBytes: 1024,
				Secrets: []Secret{{Host: addr, Header: "Authorization", Value: hostileToken, Hide: []string{"tok-7e5d3c1b9a"}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/"})
			if err == nil {
				t.Fatalf("answered: %d %q", resp.Status, resp.Body)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(strings.ToLower(err.Error()), "tok-7e5d3c1b9a") {
				t.Errorf("the error holds the secret: %v", err)
			}
			<-closed // the host closed the hostile connection
			resp, err = g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/ok"})
			if err != nil || string(resp.Body) != "ok" {
				t.Fatalf("the next request: %+v, %v", resp, err)
			}
		})
	}
}

// A redirect is the tool's answer, not followed by the host: one to a
// private address, to another host, or with the secret in its Location,
// is given with the secret hidden, and the request the tool's client
// then makes is checked like any: refused, carrying no secret.
func TestHostileRedirects(t *testing.T) {
	for _, tc := range []struct{ location, refused string }{
		{"http://169.254.169.254/latest/meta-data/", "not in the allow list"},
		{"http://10.0.0.1/", "not in the allow list"},
		{"https://evil.example/steal?t=%s", "not in the allow list"},
		{"http://%s/", "not in the allow list"}, // the host's address, another port
	} {
		t.Run(tc.location, func(t *testing.T) {
			addr, _ := hostileServer(t, func(c net.Conn, req *http.Request, gone <-chan struct{}) {
				loc := tc.location
				if strings.Contains(loc, "%s") {
					if strings.HasPrefix(loc, "https://evil") {
						loc = fmt.Sprintf(loc, strings.ReplaceAll(req.Header.Get("Authorization"), " ", "+"))
					} else {
						loc = fmt.Sprintf(loc, "127.0.0.1:1")
					}
				}
				fmt.Fprintf(c, "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", loc)
			})
			g, err := New(Rules{Allow: []string{addr}, Secrets: []Secret{{Host: addr, Header: "Authorization", Value: hostileToken, Hide: []string{"tok-7e5d3c1b9a"}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			c := g.Call()
			resp, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/"})
			if err != nil || resp.Status != 302 {
				t.Fatalf("%+v, %v", resp, err)
			}
			loc := resp.Header.Get("Location")
			if strings.Contains(strings.ToLower(loc), "tok-7e5d3c1b9a") {
				t.Fatalf("the tool is given the secret in Location: %s", loc)
			}
			_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: loc})
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.refused) {
				t.Fatalf("following it: %v", err)
			}
		})
	}
}

// A server that redirects to itself for ever meets the call's
// max_requests: the tool's client follows, the grant stops it.
func TestRedirectLoopEndsAtMaxRequests(t *testing.T) {
	addr, _ := hostileServer(t, func(c net.Conn, req *http.Request, gone <-chan struct{}) {})
	g, err := New(Rules{Allow: []string{addr}, MaxRequests: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c := g.Call()
	for i := 0; i < 3; i++ {
		if _, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/ok"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/ok"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "max_requests") {
		t.Fatalf("the fourth request: %v", err)
	}
}

// A name that resolves to loopback reaches nothing, whatever entry
// allowed the name: nothing is sent, and the secret goes nowhere.
func TestNameResolvingToLoopbackIsRefused(t *testing.T) {
	g, err := New(Rules{Allow: []string{"*"}, Resolver: fakeDNS{"rebind.example": {netip.MustParseAddr("127.0.0.1")}},
		Secrets: []Secret{{Host: "rebind.example", Header: "Authorization", Value: hostileToken, Hide: []string{"tok-7e5d3c1b9a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://rebind.example/"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "resolves to 127.0.0.1") {
		t.Fatalf("%v", err)
	}
}

// A TLS server whose certificate the system does not trust, or that
// names another host, is not sent the request, nor its secret: the
// tool is told why, and that no connection was made.
func TestTLSServerWithABadCertificate(t *testing.T) {
	s := newTLSServer(t)
	_, port, _ := net.SplitHostPort(s.tlsHostPort())
	for _, tc := range []struct {
		name, host string
		trusted    bool
		want       string
	}{
		{"untrusted", s.tlsHostPort(), false, "certificate signed by unknown authority"},
		{"another name", "localhost:" + port, true, "not localhost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(Rules{Allow: []string{tc.host}, Secrets: []Secret{{Host: tc.host, Header: "Authorization", Value: hostileToken, Hide: []string{"tok-7e5d3c1b9a"}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if tc.trusted {
				trustServer(g, s)
			}
			_, err = g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + tc.host + "/"})
			if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v", err)
			}
			if n := s.hits.Load(); n != 0 {
				t.Fatalf("the server was sent %d requests", n)
			}
		})
	}
}
