package web

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A follower that stops reading but keeps its connection open is dropped
// once a write has made no progress for writeTimeout, rather than holding
// its goroutine and file descriptor for as long as it stays connected.
func TestStalledFollowerIsDropped(t *testing.T) {
	defer func(d time.Duration) { writeTimeout = d }(writeTimeout)
	writeTimeout = 200 * time.Millisecond
	ended := make(chan error, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, line := newLineWriter(w, true), []byte(strings.Repeat("x", 64<<10))
		for n := 1; ; n++ {
			if err := out.line(n, line); err != nil {
				ended <- err
				return
			}
		}
	}))
	defer hs.Close()
	// A client that never reads: the socket buffers fill, and a write
	// blocks.
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	must(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n"))
	must(t, err)
	select {
	case err := <-ended:
		t.Logf("the stalled follower was dropped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the stream to a follower that reads nothing is still blocked in a write after 10 s")
	}
}
