package netguard

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// lockedBuffer is a log's output that tests read while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pastBodyServer answers each request on a connection with a body of 2
// bytes, "ok", and then, past its Content-Length, the Authorization
// header it was sent, as a server that miscounts its answer's length
// may.
func pastBodyServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
	return ln.Addr().String()
}

// Regression: a server that wrote past its answer's Content-Length, the
// Authorization header it was sent in those bytes, had net/http log them
// on the process's standard error ("Unsolicited response received on
// idle HTTP channel starting with ..."): the secret in clear, in cairn's
// output and the logs that keep it.
func TestSecretEchoedPastTheBodyIsNotLogged(t *testing.T) {
	addr := pastBodyServer(t)
	var out lockedBuffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&out)
	defer log.SetOutput(prev)
	defer log.SetFlags(flags)
	g, err := New(Rules{Allow: []string{addr}, Secrets: []Secret{{Host: addr, Header: "Authorization", Value: "Bearer tok-9f3c1d2e"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := 0; i < 2; i++ {
		resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/"})
		if err != nil || string(resp.Body) != "ok" {
			t.Fatalf("request %d: %+v, %v", i, resp, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(out.String(), "tok-9f3c1d2e") {
		t.Fatalf("the process's log holds the secret: %s", out.String())
	}
}

// Requests that carry a secret over HTTP/2 still share a connection: what
// net/http logs of one quotes nothing the server sent.
func TestSecretRequestsShareAnHTTP2Connection(t *testing.T) {
	var conns atomic.Int32
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 || r.Header.Get("Authorization") != "Bearer tok-9f3c1d2e" {
			http.Error(w, "HTTP/2 with the token only", http.StatusBadRequest)
		}
	}))
	s.EnableHTTP2 = true
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.StartTLS()
	defer s.Close()
	addr := strings.TrimPrefix(s.URL, "https://")
	g, err := New(Rules{Allow: []string{addr}, Secrets: []Secret{{Host: addr, Header: "Authorization", Value: "Bearer tok-9f3c1d2e"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	trust(g, pool)
	for i := 0; i < 3; i++ {
		resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: s.URL + "/"})
		if err != nil || resp.Status != 200 {
			t.Fatalf("request %d: %+v, %v", i, resp, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 requests over HTTP/2 took %d connections", n)
	}
}
