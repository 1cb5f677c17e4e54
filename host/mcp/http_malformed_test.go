package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Regression: over Streamable HTTP, a body that was not JSON, or JSON
// that is no JSON-RPC message, was answered by the SDK with a plain-text
// 400 ("malformed payload: ..."), where stdio answers the same line with
// a JSON-RPC error, -32700 (parse error) or -32600 (invalid request),
// naming the request's id when it can be read; a request whose id was
// null was taken for a notification and never answered, one whose id was
// 1.5 answered with id 1. HTTP answers as stdio
// does, with status 400, in a session and without one; the session goes
// on.
func TestHTTPMalformedBodyIsAJSONRPCError(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	post := func(session, body string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		must(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		must(t, err)
		return resp, string(b)
	}
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(initLine("1", "2025-06-18", `{}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	if resp, body := post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s %s", resp.Status, body)
	}
	for _, tt := range []struct {
		session, body string
		code          int
		id            string
	}{
		{session, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_file","arguments":{"path":`, -32700, `10`},
		{session, `garbage`, -32700, `null`},
		{session, `{"jsonrpc":"2.0","id":7,"method":"tools/list"} x`, -32700, `7`},
		{session, "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}", -32700, `8`},
		{session, `{"foo":1}`, -32600, `null`},
		{session, `{"jsonrpc":"1.0","id":"v","method":"tools/list"}`, -32600, `"v"`},
		{session, `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, `null`},
		{session, `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, `1.5`},
		{"", `garbage`, -32700, `null`},
		{"", `{"jsonrpc":"2.0","id":3,"method":"initialize"`, -32700, `3`},
	} {
		resp, body := post(tt.session, tt.body)
		var m rawMessage
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal([]byte(body), &m) != nil || m.Error == nil || m.Error.Code != tt.code || string(m.ID) != tt.id {
			t.Errorf("%q (session %q): %s %q %s, want 400 with code %d and id %s", tt.body, tt.session, resp.Status, resp.Header.Get("Content-Type"), body, tt.code, tt.id)
		}
		if resp.Header.Get("Mcp-Session-Id") != "" && tt.session == "" {
			t.Errorf("%q was given a session", tt.body)
		}
		// The session goes on.
		if resp, body := post(session, `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"list_dir"`) {
			t.Fatalf("after %q: %s %s", tt.body, resp.Status, body)
		}
	}
}
