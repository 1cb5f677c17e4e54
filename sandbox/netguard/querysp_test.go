package netguard

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// requestLineServer answers every request with "ok" and keeps the
// request lines it read, as they came.
func requestLineServer(t *testing.T) (addr string, lines func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var seen []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				mu.Lock()
				seen = append(seen, strings.TrimSuffix(line, "\r\n"))
				mu.Unlock()
				for {
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
			}()
		}
	}()
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// Regression: a query with a space in it went on the wire as it was,
// so that the request line read as another one: `GET /p?a b HTTP/1.0 x
// HTTP/1.1`. Such bytes of a query are percent-encoded, as browsers
// send them (a path's already were).
func TestQueryWithSpacesIsEscapedOnTheWire(t *testing.T) {
	addr, lines := requestLineServer(t)
	g, err := New(Rules{Allow: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, tc := range []struct{ url, line string }{
		{"/p?a b HTTP/1.0 x", "GET /p?a%20b%20HTTP/1.0%20x HTTP/1.1"},
		{"/p?q=\"<caf\xc3\xa9>\"&r=%41+b", "GET /p?q=%22%3Ccaf%C3%A9%3E%22&r=%41+b HTTP/1.1"},
		{"/a b?c=d", "GET /a%20b?c=d HTTP/1.1"},
		{"/p?a=1&b=2", "GET /p?a=1&b=2 HTTP/1.1"},
	} {
		n := len(lines())
		resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + tc.url})
		if err != nil || string(resp.Body) != "ok" {
			t.Fatalf("%q: %+v, %v", tc.url, resp, err)
		}
		if got := lines(); len(got) != n+1 || got[n] != tc.line {
			t.Errorf("%q went on the wire as %q, want %q", tc.url, got[n:], tc.line)
		}
	}
}
