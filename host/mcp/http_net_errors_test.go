package mcp

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Regression: what net/http answers itself before any handler runs (a
// request line or header it cannot read, a header too large, a
// Transfer-Encoding or HTTP version it does not read) was plain text on
// cairn mcp --http, of which a JSON-RPC client reads nothing. Through
// Listener each is a JSON-RPC error with its status and what to do, and
// an answer of the server's passes unchanged.
func TestNetHTTPErrorsAreJSONRPC(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewUnstartedServer(f.srv.Handler(""))
	hs.Listener = Listener(hs.Listener)
	hs.Start()
	t.Cleanup(hs.Close)
	addr := strings.TrimPrefix(hs.URL, "http://")
	host := "Host: " + addr + "\r\n"
	for _, c := range []struct {
		name, req string
		status    int
		says      string
	}{
		{"header too large", "POST / HTTP/1.1\r\n" + host + "X-Big: " + strings.Repeat("b", http.DefaultMaxHeaderBytes+8192) + "\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge, "send a smaller one"},
		{"malformed Host", "POST / HTTP/1.1\r\nHost: a b\r\n\r\n", http.StatusBadRequest, "malformed Host header"},
		{"request line", "BOGUS\r\n\r\n", http.StatusBadRequest, "no HTTP/1.1 request the server can read (docs/mcp.md"},
		{"transfer encoding", "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, "send the body chunked"},
		{"version", "POST / HTTP/3.0\r\n" + host + "\r\n", http.StatusHTTPVersionNotSupported, "unsupported protocol version"},
		{"a handler's refusal", "GET / HTTP/1.1\r\n" + host + "Accept: text/event-stream\r\n\r\n", http.StatusBadRequest, "Mcp-Session-Id"},
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
		var e struct {
			JSONRPC string
			ID      json.RawMessage
			Error   struct {
				Code    int
				Message string
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" || err != nil ||
			e.JSONRPC != "2.0" || string(e.ID) != "null" || e.Error.Code != -32600 || !strings.Contains(e.Error.Message, c.says) {
			t.Errorf("%s: %s %q, %+v (%v); want %d, a JSON-RPC error saying %q", c.name, resp.Status, resp.Header.Get("Content-Type"), e, err, c.status, c.says)
		}
		conn.Close()
	}
}
