package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// raw sends req on a connection of its own and reads the answer to the
// connection's end, which must come within a bound far above any timeout
// of the tests: a server that answers and keeps the connection open, or
// never answers, fails the test.
func raw(t *testing.T, addr, req string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	must(t, err)
	defer conn.Close()
	must(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, req)
	must(t, err)
	got, err := io.ReadAll(conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("no answer and no close within 10 s of\n%s\nread: %q", req, got)
	}
	return string(got)
}

// Regression: a request that announced a body and sent none was never
// answered when it was refused: net/http reads what is left of a body
// before it writes an answer, and waited with no deadline (a POST of
// Content-Length 1000 without the token hung beyond loopback, its
// connection open). A request refused before its body is read is
// answered at once, and its connection closed.
func TestARefusalDoesNotWaitForTheBody(t *testing.T) {
	f := newFixture(t, Config{})
	addr := f.http.Listener.Addr().String()
	for _, tt := range []struct {
		name, path, auth, want string
	}{
		{"no token", "/api/agents/c1/pause", "", "HTTP/1.1 401 "},
		{"no such route", "/api/nothing", f.srv.Token(), "HTTP/1.1 404 "},
		{"an id that cannot be one", "/api/agents/.x/pause", f.srv.Token(), "HTTP/1.1 400 "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := "POST " + tt.path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 1000\r\n"
			if tt.auth != "" {
				req += "Authorization: Bearer " + tt.auth + "\r\n"
			}
			got := raw(t, addr, req+"\r\n")
			if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, "\r\nConnection: close\r\n") {
				t.Fatalf("answer %q; want %q and the connection closed", got, tt.want)
			}
		})
	}
}

// A body that does not all come within BodyTimeout is 408, and its
// connection closed, rather than holding the connection for as long as
// the client keeps it open.
func TestABodyThatDoesNotComeTimesOut(t *testing.T) {
	f := newFixture(t, Config{BodyTimeout: 200 * time.Millisecond})
	f.run("w", doneAgent, doneScript)
	addr := f.http.Listener.Addr().String()
	got := raw(t, addr, "POST /api/agents/w/snapshot HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer "+f.srv.Token()+
		"\r\nContent-Length: 1000\r\n\r\n{\"label\":")
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, "\r\nConnection: close\r\n") {
		t.Fatalf("answer %q; want 408 and the connection closed", got)
	}
	if bookmarks, err := f.store.Bookmarks("w"); err != nil || len(bookmarks) != 0 {
		t.Fatalf("bookmarks %v, %v: the request that timed out made one", bookmarks, err)
	}
}

// The body's deadline is no deadline of the request: an event stream
// goes on for many times BodyTimeout, and a body that comes in time is
// read, its request answered and its connection kept.
func TestAStreamOutlivesTheBodyTimeout(t *testing.T) {
	f := newFixture(t, Config{Loopback: true, BodyTimeout: 50 * time.Millisecond})
	storeAgent(t, f.store, "s", 1)
	lock, err := f.store.Lock("s", checkpoint.ThisProcess("test"))
	must(t, err)
	resp := f.do("/api/agents/s/events?follow=1", nil, "")
	r := bufio.NewReader(resp.Body)
	w, err := f.store.Events("s")
	must(t, err)
	for i := 1; i <= 3; i++ {
		time.Sleep(200 * time.Millisecond) // four times the body's timeout
		fmt.Fprintf(w, `{"type":"warning","agent":"s","run":"run-2","text":"later %d"}`+"\n", i)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended %v after it began: %v", time.Duration(i)*200*time.Millisecond, err)
			}
			if strings.Contains(line, fmt.Sprintf("later %d", i)) {
				break
			}
		}
	}
	w.Close()
	lock.Unlock()

	addr := f.http.Listener.Addr().String()
	conn, err := net.Dial("tcp", addr)
	must(t, err)
	defer conn.Close()
	must(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	body := `{"label":"l1"}`
	fmt.Fprintf(conn, "POST /api/agents/s/snapshot HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		f.srv.Token(), len(body), body)
	status, err := bufio.NewReader(conn).ReadString('\n')
	must(t, err)
	if !strings.HasPrefix(status, "HTTP/1.1 200 ") {
		t.Fatalf("a body sent whole: %q", status)
	}
}
