package netguard

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// closedPort is a loopback address where nothing listens: a connection
// to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// systemSaysNoSuchHost skips the test unless the system's resolver
// answers quickly that name does not exist: without a resolver in reach,
// the answer is a timeout or a refusal, not what the test is about.
func systemSaysNoSuchHost(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Skipf("the system resolver does not say %s does not exist: %v", name, err)
	}
}

func post(url string) *sandbox.NetRequest {
	return &sandbox.NetRequest{Method: "POST", URL: url, Body: []byte("an order")}
}

// Regression: a request that reached no peer (a refused connection, a
// name that does not resolve) came back as an ordinary transport error,
// which says the request may have reached the remote side, and its body
// was counted as sent: the journal then recorded it as sent, and a seal
// after a crash told the model a POST that never left "was sent and may
// have taken effect". It is ErrNotSent, and sends no bytes.
func TestRequestThatReachedNoPeerIsNotSent(t *testing.T) {
	addr := closedPort(t)
	tlsServer := newTLSServer(t)
	for _, tc := range []struct {
		name  string
		rules Rules
		url   string
		says  string
		skip  func(*testing.T)
	}{
		{"connection refused", Rules{Allow: []string{addr}}, "http://" + addr + "/order", "connection refused", nil},
		{"name that does not resolve", Rules{Allow: []string{"nonexistent.test"}, Resolver: fakeDNS{}}, "http://nonexistent.test/order", "no such host", nil},
		{"an .invalid name, system resolver", Rules{Allow: []string{"nonexistent.invalid"}}, "http://nonexistent.invalid/order", "no such host",
			func(t *testing.T) { systemSaysNoSuchHost(t, "nonexistent.invalid") }},
		{"TLS handshake failed", Rules{Allow: []string{tlsServer.tlsHostPort()}}, "https://" + tlsServer.tlsHostPort() + "/order", "certificate", nil},
		{"no connection within the grant's timeout", Rules{Allow: []string{"slow.test"}, Resolver: slowDNS{}, Timeout: 50 * time.Millisecond},
			"http://slow.test/order", "no connection within 50ms (net: {timeout})", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != nil {
				tc.skip(t)
			}
			tc.rules.Methods = []string{"POST"}
			c := guard(t, tc.rules)
			_, err := c.RoundTrip(context.Background(), post(tc.url))
			if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v; want ErrNotSent saying %q", err, tc.says)
			}
			if c.Sent != 0 || c.Requests() != 1 {
				t.Fatalf("counted %d bytes sent, %d requests; want 0 bytes of 1 request", c.Sent, c.Requests())
			}
		})
	}
	if n := tlsServer.hits.Load(); n != 0 {
		t.Fatalf("the TLS server saw %d requests", n)
	}
}

// What reached the peer is sent, however it ended: a connection the
// server closed after reading the request, a server that never answers.
// When in doubt, a request was sent.
func TestRequestThatReachedThePeerIsSent(t *testing.T) {
	reset := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	})
	release := make(chan struct{})
	hang := newServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	h2 := newH2Server(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	for name, s := range map[string]*server{"reset": reset, "no answer": hang, "no answer over HTTP/2": h2} {
		t.Run(name, func(t *testing.T) {
			c := guard(t, Rules{Allow: []string{strings.TrimPrefix(s.hostPort(), "https://")}, Methods: []string{"POST"}, Timeout: 100 * time.Millisecond})
			if s.TLS != nil {
				trustServer(c.g, s)
			}
			_, err := c.RoundTrip(context.Background(), post(s.URL+"/order"))
			if err == nil || errors.Is(err, ErrNotSent) || errors.Is(err, ErrRefused) {
				t.Fatalf("got %v; want an error of a request that was sent", err)
			}
			if s.hits.Load() != 1 || c.Sent != int64(len("an order")) {
				t.Fatalf("the server saw %d requests; counted %d bytes sent", s.hits.Load(), c.Sent)
			}
		})
	}
}

// slowDNS answers no name before its caller gives up.
type slowDNS struct{}

func (slowDNS) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// newTLSServer is a loopback HTTPS server whose certificate no system
// root signs.
func newTLSServer(t *testing.T) *server {
	s := &server{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.hits.Add(1) }))
	t.Cleanup(s.Close)
	return s
}

func (s *server) tlsHostPort() string { return strings.TrimPrefix(s.URL, "https://") }

// newH2Server is a loopback server that speaks HTTP/2 over TLS.
func newH2Server(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if r.ProtoMajor != 2 {
			http.Error(w, "HTTP/2 only", http.StatusHTTPVersionNotSupported)
			return
		}
		h(w, r)
	}))
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// trustServer makes g's transports trust the test server's certificate.
func trustServer(g *Guard, s *server) {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	trust(g, pool)
}
