package netguard

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// closeAtReuse is a loopback HTTP/1.1 server that answers each request on
// a connection kept alive, but for the second it is sent, which it reads
// whole and then closes its connection on, unanswered: as a server does
// that ends an idle connection just as the client reuses it. It returns
// its address and the count of requests it read.
func closeAtReuse(t *testing.T, reset bool) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var seen atomic.Int32
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
					io.Copy(io.Discard, req.Body)
					if seen.Add(1) == 2 {
						if reset {
							c.(*net.TCPConn).SetLinger(0)
						}
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}()
		}
	}()
	return ln.Addr().String(), &seen
}

// Regression: a request on a kept-alive connection that the server closed
// unanswered as it was reused failed with "EOF" (or "connection reset by
// peer") alone, on a connection read through a framedConn (whose
// requests carry a secret) as on another. net/http would send a GET again
// on a fresh connection on its own, which the journal would not know of:
// neither a GET nor a POST is sent again, on either, and the tool is told
// what happened, that the request was not sent again and may have reached
// the remote side; the next request goes on a fresh connection.
func TestKeptAliveConnectionClosedAtReuseIsToldNotResent(t *testing.T) {
	for _, secret := range []bool{false, true} {
		for _, reset := range []bool{false, true} {
			for _, method := range []string{"GET", "POST"} {
				addr, seen := closeAtReuse(t, reset)
				r := Rules{Allow: []string{addr}, Methods: []string{"GET", "POST"}}
				if secret {
					r.Secrets = []Secret{{Host: addr, Header: "Authorization", Value: hostileToken}}
				}
				g, err := New(r)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				c := g.Call()
				req := func() (*sandbox.NetResponse, error) {
					var body []byte
					if method == "POST" {
						body = []byte("order=1")
					}
					return c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: method, URL: "http://" + addr + "/", Body: body})
				}
				name := map[bool]string{false: "plain", true: "framed"}[secret] + map[bool]string{false: " FIN", true: " RST"}[reset] + " " + method
				if _, err := req(); err != nil {
					t.Fatalf("%s: the first request: %v", name, err)
				}
				_, err = req()
				if err == nil || errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "no response: the server closed the connection, kept alive since its answer to an earlier request, without answering this one") ||
					!strings.Contains(err.Error(), "it was not sent again, and may have reached the remote side") {
					t.Errorf("%s: the request on the connection closed: %v", name, err)
				}
				if n := seen.Load(); n != 2 {
					t.Errorf("%s: the server read %d requests, want 2: the second was sent again", name, n)
				}
				if resp, err := req(); err != nil || string(resp.Body) != "ok" {
					t.Errorf("%s: the request after: %v", name, err)
				}
			}
		}
	}
}
