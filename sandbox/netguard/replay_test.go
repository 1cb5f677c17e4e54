package netguard

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// dropServer answers the first request of each connection, and reads the
// second and closes the connection without answering it: as a server
// does that took a request and then failed, or closed a kept-alive
// connection as the request came. It keeps every request it read.
type dropServer struct {
	addr string
	mu   sync.Mutex
	seen []*http.Request
}

func newDropServer(t *testing.T) *dropServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &dropServer{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *dropServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for n := 1; ; n++ {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, r)
		s.mu.Unlock()
		if n > 1 {
			return
		}
		if r.Method == "HEAD" {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
		} else {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	}
}

func (s *dropServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

// Regression: net/http's Transport sent a request again, on its own, when
// the connection it reused failed before the answer (a GET, HEAD, OPTIONS
// or TRACE, or any request with an Idempotency-Key header), so the server
// saw the request twice while the journal recorded it once. A request the
// tool sends reaches the transport as one it does not replay: the server
// sees each request once, and a request on a connection that failed is an
// error the tool is told.
func TestTransportDoesNotSendARequestTwice(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		header       map[string][]string
		body         string
	}{
		{"GET", "GET", nil, ""},
		{"HEAD", "HEAD", nil, ""},
		{"OPTIONS", "OPTIONS", nil, ""},
		{"DELETE with an idempotency key", "DELETE", map[string][]string{"Idempotency-Key": {"k-1"}}, ""},
		{"POST with an idempotency key", "POST", map[string][]string{"Idempotency-Key": {"k-1"}}, "pay"},
		{"PUT with an X-Idempotency-Key", "PUT", map[string][]string{"X-Idempotency-Key": {"k-1"}}, "put"},
		{"POST with no body and an idempotency key", "POST", map[string][]string{"idempotency-key": {"k-1"}}, ""},
		{"TRACE", "TRACE", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newDropServer(t)
			c := guard(t, Rules{Allow: []string{s.addr}, Methods: []string{"GET", "HEAD", "OPTIONS", "DELETE", "POST", "PUT", "TRACE"}})
			if _, err := c.RoundTrip(context.Background(), get("http://"+s.addr+"/first")); err != nil {
				t.Fatal(err)
			}
			req := &sandbox.NetRequest{Method: tc.method, URL: "http://" + s.addr + "/second", Header: tc.header, Body: []byte(tc.body)}
			_, err := c.RoundTrip(context.Background(), req)
			seen := s.requests()
			if len(seen) != 2 {
				t.Fatalf("the server saw %d requests, the tool sent 2 (the second: %v)", len(seen), err)
			}
			// Sent as before: a body with its length, none without one.
			r := seen[1]
			if r.Method != tc.method || r.ContentLength != int64(len(tc.body)) || len(r.TransferEncoding) != 0 {
				t.Errorf("the server read %s, %d bytes, %v", r.Method, r.ContentLength, r.TransferEncoding)
			}
			if tc.body == "" && tc.method != "POST" && r.Header.Get("Content-Length") != "" {
				t.Errorf("a request with no body came with Content-Length %s", r.Header.Get("Content-Length"))
			}
			for k := range tc.header {
				if r.Header.Get(k) != "k-1" {
					t.Errorf("%s did not reach the server: %v", k, r.Header)
				}
			}
		})
	}
}
