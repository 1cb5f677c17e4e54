package netguard

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// countedServer is a loopback HTTP/1.1 server, over TLS or not, that
// counts the connections it accepts and answers each request with the
// Authorization header it was sent.
func countedServer(t testing.TB, overTLS bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get("Authorization"))
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	if overTLS {
		s.StartTLS() // HTTP/1.1 only: EnableHTTP2 is not set
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, &conns
}

// secretGuard is a guard of s that sends token as its Authorization;
// none for "".
func secretGuard(t testing.TB, s *httptest.Server, token string) *Guard {
	t.Helper()
	addr := s.Listener.Addr().String()
	r := Rules{Allow: []string{addr}, MaxRequests: 1 << 30}
	if token != "" {
		r.Secrets = []Secret{{Host: addr, Header: "Authorization", Value: token}}
	}
	g, err := New(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	if s.TLS != nil {
		pool := x509.NewCertPool()
		pool.AddCert(s.Certificate())
		trust(g, pool)
	}
	return g
}

// Regression: each HTTP/1.1 request that carried a secret was sent on a
// connection of its own, closed once its answer was read: a TCP (and a
// TLS) handshake a request. Requests of one grant to one host share a
// kept-alive connection, over http and https alike.
func TestSecretRequestsReuseAnHTTP1Connection(t *testing.T) {
	for _, overTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", overTLS), func(t *testing.T) {
			s, conns := countedServer(t, overTLS)
			g := secretGuard(t, s, "Bearer tok-9f3c1d2e")
			for i := 0; i < 3; i++ {
				resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: s.URL + "/"})
				if err != nil || resp.Status != 200 || string(resp.Body) != "[redacted]" {
					t.Fatalf("request %d: %+v, %v", i, resp, err)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("3 requests of one grant took %d connections", n)
			}
		})
	}
}

// Two grants of one host never share a connection: each has its own,
// and each request carries its own grant's secret.
func TestTwoGrantsDoNotShareAConnection(t *testing.T) {
	s, conns := countedServer(t, false)
	a, b := secretGuard(t, s, "Bearer tok-aaaa1111"), secretGuard(t, s, "Bearer tok-bbbb2222")
	for i := 0; i < 2; i++ {
		for _, g := range []*Guard{a, b} {
			resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: s.URL + "/"})
			if err != nil || string(resp.Body) != "[redacted]" {
				t.Fatalf("request %d: %+v, %v", i, resp, err)
			}
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("two grants' 4 requests took %d connections, where each grant has its own", n)
	}
}

// A server that writes on a kept-alive connection while it is idle (the
// secret it was sent, some time after its answer) has it closed, and
// nothing it wrote reaches the process's log: net/http would log it
// (Unsolicited response received on idle HTTP channel).
func TestSecretWrittenOnAnIdleConnectionIsNotLogged(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	closed := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		<-wrote // the client has read the answer
		fmt.Fprintf(c, "auth=%s", req.Header.Get("Authorization"))
		br.ReadByte() // returns when the client closes the connection
		close(closed)
	}()
	var out lockedBuffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&out)
	defer log.SetOutput(prev)
	defer log.SetFlags(flags)
	addr := ln.Addr().String()
	g, err := New(Rules{Allow: []string{addr}, Secrets: []Secret{{Host: addr, Header: "Authorization", Value: "Bearer tok-9f3c1d2e"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/"})
	if err != nil || string(resp.Body) != "ok" {
		t.Fatalf("%+v, %v", resp, err)
	}
	close(wrote)
	<-closed
	g.Close()
	if strings.Contains(out.String(), "tok-9f3c1d2e") {
		t.Fatalf("the process's log holds the secret: %s", out.String())
	}
}

// Every kind of answer is read whole and leaves its connection for the
// next request: a body of a known length, a chunked one with trailers,
// none (HEAD, 204, 304), after a 100 Continue or a 103, and gzip.
func TestEveryAnswerLeavesItsConnectionReusable(t *testing.T) {
	s, conns := countedServer(t, false)
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			w.Header().Set("Trailer", "X-Sum")
			fmt.Fprint(w, "part one, ")
			w.(http.Flusher).Flush()
			fmt.Fprint(w, "part two")
			w.Header().Set("X-Sum", "2")
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		case "/103":
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			fmt.Fprint(w, "after hints")
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped(t, "unzipped"))
		case "/expect":
			b, _ := io.ReadAll(r.Body) // the server answers 100 Continue first
			fmt.Fprintf(w, "got %s", b)
		default:
			fmt.Fprint(w, "sized")
		}
	})
	g := secretGuard(t, s, "Bearer tok-9f3c1d2e")
	g.methods["HEAD"], g.methods["POST"] = true, true
	for _, tc := range []struct{ method, path, want string }{
		{"POST", "/expect", "got a body"},
		{"GET", "/", "sized"},
		{"GET", "/chunked", "part one, part two"},
		{"HEAD", "/", ""},
		{"GET", "/204", ""},
		{"GET", "/304", ""},
		{"GET", "/103", "after hints"},
		{"GET", "/gzip", "unzipped"},
		{"GET", "/", "sized"},
	} {
		req := &sandbox.NetRequest{Method: tc.method, URL: s.URL + tc.path}
		if tc.method == "POST" {
			req.Header, req.Body = map[string][]string{"Expect": {"100-continue"}}, []byte("a body")
		}
		resp, err := g.Call().RoundTrip(context.Background(), req)
		if err != nil || string(resp.Body) != tc.want {
			t.Fatalf("%s %s: %+v, %v", tc.method, tc.path, resp, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("9 requests took %d connections", n)
	}
}

func gzipped(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, text)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Over https too, a server that writes past its answers (the secret it
// was sent) has nothing of it logged, and each answer is given whole.
func TestSecretEchoedPastTheBodyOverTLSIsNotLogged(t *testing.T) {
	cert := httptest.NewTLSServer(nil) // for its certificate
	t.Cleanup(cert.Close)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: cert.TLS.Certificates, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
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
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokauth=%s", req.Header.Get("Authorization"))
				}
			}()
		}
	}()
	var out lockedBuffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&out)
	defer log.SetOutput(prev)
	defer log.SetFlags(flags)
	addr := ln.Addr().String()
	g, err := New(Rules{Allow: []string{addr}, Secrets: []Secret{{Host: addr, Header: "Authorization", Value: "Bearer tok-9f3c1d2e"}}})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Certificate())
	trust(g, pool)
	for i := 0; i < 3; i++ {
		resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/"})
		if err != nil || string(resp.Body) != "ok" {
			t.Fatalf("request %d: %+v, %v", i, resp, err)
		}
	}
	g.Close()
	if strings.Contains(out.String(), "tok-9f3c1d2e") {
		t.Fatalf("the process's log holds the secret: %s", out.String())
	}
}
