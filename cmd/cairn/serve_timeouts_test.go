package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// closedWithin reads conn to its end, which must come within a bound far
// above the limits the tests set; it returns what was read.
func closedWithin(t *testing.T, conn net.Conn, what string) string {
	t.Helper()
	must(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, err := io.ReadAll(conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the connection is still open after 10 s; read %q", what, got)
	}
	return string(got)
}

// Regression: cairn serve set no idle limit, and a connection kept alive
// after its answer stayed open for as long as the client kept it. It is
// closed once the idle limit passes, as one that sends half a header is
// once the header's has.
func TestServeClosesAnIdleConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	hs := httpServer(context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), connLimits{header: 200 * time.Millisecond, idle: 200 * time.Millisecond})
	go hs.Serve(ln)
	defer hs.Close()
	for _, tt := range []struct{ name, send string }{
		{"idle after an answer", "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"},
		{"half a header", "GET / HTTP/1.1\r\nHost: loc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			must(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, tt.send)
			must(t, err)
			got := closedWithin(t, conn, tt.name)
			if strings.Contains(tt.send, "\r\n\r\n") && !strings.HasPrefix(got, "HTTP/1.1 200 ") {
				t.Fatalf("no answer before the close: %q", got)
			}
		})
	}
}

// Regression: a state change sent to a real cairn serve without the token,
// announcing a body of 1000 bytes and sending none, was never answered,
// and its connection stayed open. It is answered 401 at once, and the
// connection closed.
func TestServeAnswersARefusalWithoutItsBody(t *testing.T) {
	store := t.TempDir()
	srv := exec.Command(cairnBinary(t), "serve", "--store", store, "--cache", cacheForTests(t), "--addr", "127.0.0.1:0")
	stdout, err := srv.StdoutPipe()
	must(t, err)
	must(t, srv.Start())
	defer srv.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && lines.Scan() {
		if _, url, ok := strings.Cut(lines.Text(), " on http://"); ok {
			addr = url
		}
	}
	conn, err := net.Dial("tcp", addr)
	must(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /api/agents/c1/pause HTTP/1.1\r\nHost: "+addr+"\r\nContent-Length: 1000\r\n\r\n")
	must(t, err)
	if got := closedWithin(t, conn, "a POST without the token"); !strings.HasPrefix(got, "HTTP/1.1 401 ") {
		t.Fatalf("answer %q, want 401", got)
	}
}
