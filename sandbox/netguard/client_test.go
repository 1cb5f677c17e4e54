package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// fakeDNS answers every name with its addresses.
type fakeDNS map[string][]netip.Addr

func (d fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := d[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// server is a loopback HTTP server that counts its requests and keeps
// the last one's headers.
type server struct {
	*httptest.Server
	hits   atomic.Int32
	header atomic.Value
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.header.Store(r.Header.Clone())
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) hostPort() string { return strings.TrimPrefix(s.URL, "http://") }

func (s *server) port() string { _, p, _ := net.SplitHostPort(s.hostPort()); return p }

func hello(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Method", r.Method)
	io.WriteString(w, "hello "+string(b))
}

func guard(t *testing.T, r Rules) *Client {
	g, err := New(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g.Call()
}

func get(url string) *sandbox.NetRequest { return &sandbox.NetRequest{Method: "GET", URL: url} }

func TestClientSends(t *testing.T) {
	s := newServer(t, hello)
	c := guard(t, Rules{Allow: []string{s.hostPort()}, Methods: []string{"GET", "POST"}})
	resp, err := c.RoundTrip(context.Background(), get(s.URL+"/x"))
	if err != nil || resp.Status != 200 || string(resp.Body) != "hello " {
		t.Fatalf("GET: %+v, %v", resp, err)
	}
	resp, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: s.URL, Body: []byte("there")})
	if err != nil || string(resp.Body) != "hello there" || resp.Header.Get("X-Method") != "POST" {
		t.Fatalf("POST: %+v, %v", resp, err)
	}
	if c.Requests() != 2 || c.Sent != 5 || c.Received != int64(len("hello ")+len("hello there")) {
		t.Fatalf("counted %d requests, %d sent, %d received", c.Requests(), c.Sent, c.Received)
	}
}

// Every refusal of the grant is ErrRefused, and reaches no server.
func TestClientRefuses(t *testing.T) {
	s := newServer(t, hello)
	dns := fakeDNS{"public.test": {netip.MustParseAddr("10.0.0.1")}, "localhost": {netip.MustParseAddr("127.0.0.1")},
		"rebind.test": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")}}
	names := []string{"*", "*:" + s.port()} // any name, never an address
	for _, tc := range []struct {
		name  string
		allow []string
		req   *sandbox.NetRequest
	}{
		{"host not allowed", []string{"api.test:" + s.port()}, get("http://other.test:" + s.port() + "/")},
		{"port not allowed", []string{s.hostPort()}, get("http://127.0.0.1:1/")},
		{"address not allowed by a name wildcard", names, get(s.URL)},
		{"metadata address", names, get("http://169.254.169.254/latest/meta-data/")},
		{"metadata in decimal", names, get("http://2852039166/")},
		{"metadata IPv6", names, get("http://[fd00:ec2::254]/")},
		{"loopback by another spelling", names, get("http://0x7f.1:" + s.port() + "/")},
		{"IPv4-mapped loopback", names, get("http://[::ffff:127.0.0.1]:" + s.port() + "/")},
		{"IPv4-compatible loopback", names, get("http://[::127.0.0.1]:" + s.port() + "/")},
		{"percent-encoded loopback", names, get("http://%31%32%37.0.0.1:" + s.port() + "/")},
		{"unspecified address", names, get("http://0.0.0.0:" + s.port() + "/")},
		{"IPv6 unspecified", names, get("http://[::]:" + s.port() + "/")},
		{"port zero", []string{"*"}, get("http://example.com:0/")},
		{"name resolving to a private address", names, get("http://public.test:" + s.port() + "/")},
		{"name with one private address among public ones", names, get("http://rebind.test:" + s.port() + "/")},
		{"localhost through a wildcard", names, get("http://localhost:" + s.port() + "/")},
		{"method not granted", []string{s.hostPort()}, &sandbox.NetRequest{Method: "DELETE", URL: s.URL}},
		{"credentials in the URL", []string{s.hostPort()}, get("http://user:pw@" + s.hostPort() + "/")},
		{"scheme", []string{"*"}, get("file:///etc/passwd")},
		{"request body too large", []string{s.hostPort()}, &sandbox.NetRequest{Method: "GET", URL: s.URL, Body: make([]byte, 11)}},
		{"too many headers", []string{s.hostPort()}, &sandbox.NetRequest{Method: "GET", URL: s.URL, Header: manyHeaders()}},
		// Regression: these reached net/http, which refused them after the
		// request was journaled as sent.
		{"header value with CRLF", []string{s.hostPort()}, &sandbox.NetRequest{Method: "GET", URL: s.URL, Header: map[string][]string{"X-A": {"a\r\nX-B: b"}}}},
		{"header name not a token", []string{s.hostPort()}, &sandbox.NetRequest{Method: "GET", URL: s.URL, Header: map[string][]string{"Bad Name": {"a"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := guard(t, Rules{Allow: tc.allow, Resolver: dns, MaxRequestBytes: 10})
			before := s.hits.Load()
			resp, err := c.RoundTrip(context.Background(), tc.req)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("got %+v, %v; want ErrRefused", resp, err)
			}
			if s.hits.Load() != before {
				t.Fatal("the refused request reached the server")
			}
		})
	}
}

// Regression: a URL that did not read was refused with url.Parse's text,
// which quotes the URL whole, secrets in its query and all; the error is
// recorded. It now says why without the URL.
func TestRefusedURLIsNotQuoted(t *testing.T) {
	c := guard(t, Rules{Allow: []string{"*"}})
	_, err := c.RoundTrip(context.Background(), get("http://127.0.0.1:abc/?access_token=QPARAM2"))
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "QPARAM2") || !strings.Contains(err.Error(), "invalid port") {
		t.Fatalf("got %v; want a refusal saying the port is invalid, without the URL", err)
	}
}

// An allow entry that names an address, or localhost, reaches it.
func TestClientReachesNamedSpecialAddresses(t *testing.T) {
	s := newServer(t, hello)
	dns := fakeDNS{"localhost": {netip.MustParseAddr("127.0.0.1")}}
	for _, allow := range []string{s.hostPort(), "localhost:" + s.port()} {
		c := guard(t, Rules{Allow: []string{allow}, Resolver: dns})
		u := strings.Replace(s.URL, "127.0.0.1", strings.Split(allow, ":")[0], 1)
		if _, err := c.RoundTrip(context.Background(), get(u)); err != nil {
			t.Errorf("allow %s: %v", allow, err)
		}
	}
}

func manyHeaders() map[string][]string {
	h := map[string][]string{}
	for i := range MaxHeaders + 1 {
		h["X-H"+strings.Repeat("a", i)] = []string{"v"}
	}
	return h
}

func TestClientLimits(t *testing.T) {
	big := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 100)) })
	c := guard(t, Rules{Allow: []string{big.hostPort()}, MaxResponseBytes: 99, MaxRequests: 2})
	if _, err := c.RoundTrip(context.Background(), get(big.URL)); err == nil || !strings.Contains(err.Error(), "max_response_bytes") {
		t.Fatalf("oversize body: %v", err)
	}
	if _, err := c.RoundTrip(context.Background(), get(big.URL)); err == nil {
		t.Fatal("oversize body again: no error")
	}
	if _, err := c.RoundTrip(context.Background(), get(big.URL)); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "max_requests") {
		t.Fatalf("third request of two: %v", err)
	}
	if big.hits.Load() != 2 {
		t.Fatalf("server saw %d requests, want 2", big.hits.Load())
	}
}

func TestClientTimesOutOnAHangingPeer(t *testing.T) {
	release := make(chan struct{})
	hang := newServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	c := guard(t, Rules{Allow: []string{hang.hostPort()}, Timeout: 50 * time.Millisecond})
	_, err := c.RoundTrip(context.Background(), get(hang.URL))
	if err == nil || !strings.Contains(err.Error(), "net: {timeout}") {
		t.Fatalf("got %v", err)
	}
}

// A redirect is the response; following it is a new request, checked
// like the first.
func TestClientRedirectIsCheckedAgain(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	c := guard(t, Rules{Allow: []string{s.hostPort(), "*"}})
	resp, err := c.RoundTrip(context.Background(), get(s.URL))
	if err != nil || resp.Status != http.StatusFound {
		t.Fatalf("got %+v, %v", resp, err)
	}
	if _, err := c.RoundTrip(context.Background(), get(resp.Header.Get("Location"))); !errors.Is(err, ErrRefused) {
		t.Fatalf("redirect to the metadata address: %v", err)
	}
}

func TestClientAddsSecrets(t *testing.T) {
	s := newServer(t, hello)
	c := guard(t, Rules{Allow: []string{s.hostPort()}, Secrets: []Secret{{Host: s.hostPort(), Header: "authorization", Value: "Bearer s3cret"}}})
	req := &sandbox.NetRequest{Method: "GET", URL: s.URL, Header: map[string][]string{"Authorization": {"Bearer guest"}}}
	if _, err := c.RoundTrip(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := s.header.Load().(http.Header).Get("Authorization"); got != "Bearer s3cret" {
		t.Fatalf("server saw Authorization %q", got)
	}
	if req.Header["Authorization"][0] != "Bearer guest" {
		t.Fatal("the secret was written into the guest's request")
	}
}

func TestClientVerifiesTLS(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(hello))
	defer s.Close()
	c := guard(t, Rules{Allow: []string{strings.TrimPrefix(s.URL, "https://")}})
	if _, err := c.RoundTrip(context.Background(), get(s.URL)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a self-signed certificate: %v", err)
	}
}

// No proxy from the environment is used.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	s := newServer(t, hello)
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	c := guard(t, Rules{Allow: []string{s.hostPort()}})
	if _, err := c.RoundTrip(context.Background(), get(s.URL)); err != nil {
		t.Fatal(err)
	}
}

func TestRedact(t *testing.T) {
	h := Redact(map[string][]string{"authorization": {"Bearer x"}, "X-Api-Key": {"k"}, "Accept": {"text/html"}, "X-Echo": {"has tok123 in it"}}, "tok123")
	if h["Authorization"][0] != Redacted || h["X-Api-Key"][0] != Redacted || h["Accept"][0] != "text/html" || h["X-Echo"][0] != Redacted {
		t.Fatalf("got %v", h)
	}
	u := RedactURL("https://u:p@api.test/a?api_key=1&q=tok123&page=2", "tok123")
	if strings.Contains(u, "u:p") || strings.Contains(u, "tok123") || strings.Contains(u, "api_key=1") || !strings.Contains(u, "page=2") {
		t.Fatalf("got %s", u)
	}
}

// Regression: a grant's methods were case-sensitive: `methods: [post]`
// then refused a POST, and `connect` slipped past the CONNECT ban. A
// grant's methods are upper-cased, and CONNECT is refused in any case.
func TestGrantMethodsInAnyCase(t *testing.T) {
	s := newServer(t, hello)
	c := guard(t, Rules{Allow: []string{s.hostPort()}, Methods: []string{"post"}})
	if _, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: s.URL}); err != nil {
		t.Fatalf("POST under methods [post]: %v", err)
	}
	for _, m := range []string{"connect", "CONNECT", "Connect", "", "GET X"} {
		if _, err := New(Rules{Allow: []string{"*"}, Methods: []string{m}}); !errors.Is(err, ErrBadRule) {
			t.Errorf("methods [%q]: %v, want ErrBadRule", m, err)
		}
	}
}

// A refusal names how to grant what it refused both in an agent file and
// on cairn exec's command line (it once named only the agent file's keys).
func TestRefusalSaysHowToGrant(t *testing.T) {
	c := guard(t, Rules{Allow: []string{"api.test"}})
	_, err := c.RoundTrip(context.Background(), get("http://other.test/"))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "net: {allow}") || !strings.Contains(err.Error(), "--net for cairn exec") {
		t.Fatalf("got %v", err)
	}
	_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "DELETE", URL: "http://api.test/"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--net-method for cairn exec") {
		t.Fatalf("got %v", err)
	}
}

// Regression: a secret for a host no allow entry reaches was taken, and
// never sent. It is refused when the grant is read.
func TestSecretForAHostNotAllowed(t *testing.T) {
	if _, err := New(Rules{Allow: []string{"api.test"}, Secrets: []Secret{{Host: "other.test", Header: "X-Key", Value: "v"}}}); !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), "never be sent") {
		t.Fatalf("got %v, want ErrBadRule", err)
	}
	if _, err := New(Rules{Allow: []string{"api.test"}, Secrets: []Secret{{Host: "api.test", Header: "X-Key", Value: "v"}}}); err != nil {
		t.Fatalf("a secret for an allowed host: %v", err)
	}
}
