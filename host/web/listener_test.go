package web

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Regression: what net/http answers itself, before any handler runs,
// was plain text ("400 Bad Request: malformed Host header", "431 Request
// Header Fields Too Large", ...), where the API answers JSON everywhere
// else. Through Listener each is the API's JSON error, with its status and
// what to do, and an answer of the server's passes unchanged.
func TestNetHTTPErrorsAreJSON(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	addr := strings.TrimPrefix(f.http.URL, "http://")
	host := "Host: " + addr + "\r\n"
	for _, c := range []struct {
		name, req string
		status    int
		says      string
	}{
		{"header too large", "GET /api/info HTTP/1.1\r\n" + host + "X-Big: " + strings.Repeat("b", http.DefaultMaxHeaderBytes+8192) + "\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge, "send a smaller one"},
		{"malformed Host", "GET /api/info HTTP/1.1\r\nHost: a b\r\n\r\n", http.StatusBadRequest, "malformed Host header"},
		{"no Host", "GET /api/info HTTP/1.1\r\n\r\n", http.StatusBadRequest, "missing required Host header"},
		{"two Hosts", "GET /api/info HTTP/1.1\r\n" + host + host + "\r\n", http.StatusBadRequest, "no HTTP/1.1 request the server can read"},
		{"request line", "BOGUS\r\n\r\n", http.StatusBadRequest, "no HTTP/1.1 request the server can read"},
		{"header line", "GET /api/info HTTP/1.1\r\n" + host + "no colon\r\n\r\n", http.StatusBadRequest, "no HTTP/1.1 request the server can read"},
		{"transfer encoding", "POST /api/agents/x/pause HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, "send the body chunked"},
		{"version", "GET /api/info HTTP/3.0\r\n" + host + "\r\n", http.StatusHTTPVersionNotSupported, "unsupported protocol version"},
		{"expect", "GET /api/info HTTP/1.1\r\n" + host + "Expect: wonders\r\n\r\n", http.StatusExpectationFailed, "100-continue"},
		{"a handler's answer", "GET /api/info HTTP/1.1\r\n" + host + "\r\n", http.StatusOK, ""},
		{"a handler's error", "GET /api/agents/nosuch HTTP/1.1\r\n" + host + "\r\n", http.StatusNotFound, `agent "nosuch": not found`},
	} {
		conn, err := net.Dial("tcp", addr)
		must(t, err)
		go conn.Write([]byte(c.req)) // the 431's header is still being sent when it is answered
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			conn.Close()
			continue
		}
		var e struct{ Error string }
		err = json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" || err != nil || !strings.Contains(e.Error, c.says) {
			t.Errorf("%s: %s %q, %q (%v); want %d, JSON saying %q", c.name, resp.Status, resp.Header.Get("Content-Type"), e.Error, err, c.status, c.says)
		}
		conn.Close()
	}
}
