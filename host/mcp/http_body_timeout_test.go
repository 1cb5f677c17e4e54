package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Regression: a client that sent a POST's headers and then its body a
// byte at a time, or never, held its handler and goroutine for as long as
// it liked (the server bounds only the headers' time). Its body now has
// bodyTimeout to arrive: the answer is 408 with a JSON-RPC error saying
// so, its connection is closed, and the server serves the next client.
func TestPostBodyThatNeverArrivesIsAnsweredAndClosed(t *testing.T) {
	old := bodyTimeout
	bodyTimeout = 200 * time.Millisecond
	t.Cleanup(func() { bodyTimeout = old })
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	conn, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	must(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
	must(t, err)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // fifty times the bound: the test's own guard
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that never arrived: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	var m rawMessage
	if resp.StatusCode != http.StatusRequestTimeout || json.Unmarshal(body, &m) != nil || m.Error == nil ||
		!strings.Contains(m.Error.Message, "did not arrive within 200ms") {
		t.Fatalf("answer %s %s, want 408 with a JSON-RPC error saying the body did not arrive", resp.Status, body)
	}
	if !resp.Close {
		t.Error("the connection of a body that never arrived is kept open")
	}
	p := httpPoster{t, hs.URL}
	if id := p.session("2025-06-18"); id == "" {
		t.Fatal("the server did not serve the next client")
	}
}
