package main

import (
	"bufio"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Regression: a real `cairn serve` answered what Go's HTTP server refuses
// before any route sees it (a malformed Host, here) in plain text, where
// its API answers JSON everywhere else.
func TestServeAnswersNetHTTPErrorsInJSON(t *testing.T) {
	srv := exec.Command(cairnBinary(t), "serve", "--store", t.TempDir(), "--cache", cacheForTests(t), "--addr", "127.0.0.1:0")
	stdout, err := srv.StdoutPipe()
	must(t, err)
	must(t, srv.Start())
	defer srv.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var addr string
	for addr == "" && lines.Scan() {
		if _, url, ok := strings.Cut(lines.Text(), " on http://"); ok && strings.HasPrefix(lines.Text(), "cairn serve:") {
			addr = url
		}
	}
	conn, err := net.Dial("tcp", addr)
	must(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /api/info HTTP/1.1\r\nHost: a b\r\n\r\n"))
	must(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	must(t, err)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("a malformed Host: %s, %q; want 400 in JSON", resp.Status, resp.Header.Get("Content-Type"))
	}
	must(t, srv.Process.Signal(syscall.SIGINT))
	waitExit(t, srv, "cairn serve did not stop within a minute of SIGINT")
}
