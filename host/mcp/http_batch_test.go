package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// httpPoster posts JSON-RPC bodies to a Streamable HTTP server, as a raw
// client would.
type httpPoster struct {
	t   *testing.T
	url string
}

// post sends body in session (none if ""), with the Mcp-Protocol-Version
// header version (none if ""), and returns the answer and its body.
func (p httpPoster) post(session, version, body string) (*http.Response, string) {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	must(p.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	must(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(p.t, err)
	return resp, string(b)
}

// session initializes a session of protocol version v and returns its id.
func (p httpPoster) session(v string) string {
	p.t.Helper()
	resp, body := p.post("", "", initLine("1", v, `{}`))
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" || !strings.Contains(body, `"protocolVersion":"`+v+`"`) {
		p.t.Fatalf("initialize %s: %s %s", v, resp.Status, body)
	}
	if resp, body := p.post(id, v, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		p.t.Fatalf("initialized: %s %s", resp.Status, body)
	}
	return id
}

// Regression: over Streamable HTTP, a JSON-RPC batch in a session of
// protocol 2025-06-18 or later (which has none) was answered by the SDK
// with a plain-text 400, or, without an Mcp-Protocol-Version header,
// taken as if the session had batches; an empty body and an empty batch
// were answered with a plain-text 400 too (which the Go SDK's client
// takes for a broken connection), and a batch with a request id twice
// had one answer for both. Each is answered, with status 400, by a
// JSON-RPC error with id null, as stdio answers the same line: -32700
// for an empty body (no JSON), -32600 for a batch. A session of 2025-03-26
// has its batches answered; the session goes on.
func TestHTTPBatchAndEmptyBodyAreJSONRPCErrors(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	newer, older := p.session("2025-06-18"), p.session("2025-03-26")
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, tt := range []struct {
		session, version, body string
		code                   int
	}{
		{newer, "2025-06-18", `[` + ping + `]`, -32600},
		{newer, "", `[` + ping + `]`, -32600},
		{newer, "2025-06-18", ``, -32700},
		{newer, "2025-06-18", `[]`, -32600},
		{"", "", `[` + initLine("1", "2025-03-26", `{}`) + `]`, -32600},
		{"", "", ``, -32700},
		{older, "2025-03-26", ``, -32700},
		{older, "2025-03-26", `[]`, -32600},
		{older, "2025-03-26", `[{"foo":1}]`, -32600},
		{older, "2025-03-26", `[` + ping + `,` + ping + `]`, -32600},
		{older, "2025-03-26", `[{"jsonrpc":"2.0","id":null,"method":"ping"}]`, -32600},
		{older, "2025-03-26", `[{"jsonrpc":"2.0","id":1.5,"method":"ping"}]`, -32600},
		{older, "2025-06-18", `[` + ping + `]`, -32600},
	} {
		resp, body := p.post(tt.session, tt.version, tt.body)
		var m rawMessage
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal([]byte(body), &m) != nil || m.Error == nil || m.Error.Code != tt.code || string(m.ID) != "null" {
			t.Errorf("%q (session %q, version %q): %s %q %s, want 400 with code %d and id null",
				tt.body, tt.session, tt.version, resp.Status, resp.Header.Get("Content-Type"), body, tt.code)
		}
		for _, s := range []struct{ id, v string }{{newer, "2025-06-18"}, {older, "2025-03-26"}} {
			if resp, body := p.post(s.id, s.v, `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"list_dir"`) {
				t.Fatalf("after %q, session of %s: %s %s", tt.body, s.v, resp.Status, body)
			}
		}
	}
	// A batch of a session of 2025-03-26 is answered, a notification in
	// it taken.
	resp, body := p.post(older, "2025-03-26", `[`+ping+`,{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":2,"result":{}`) || !strings.Contains(body, `"list_dir"`) {
		t.Errorf("a batch of 2025-03-26: %s %s", resp.Status, body)
	}
}

// Regression: over Streamable HTTP, a request the SDK does not handle
// (a method it does not know, a notification's method sent with an id,
// a request without the params it needs) and a request with an
// Mcp-Protocol-Version header of a version the server does not speak were
// answered with a plain-text 400, which the Go SDK's client takes for a
// broken connection, where stdio answers -32601 or -32600 naming the
// request's id. They are answered so over HTTP too, with status 400, and
// a notification of a method the server does not know is let go (202), as
// stdio lets it go; the session goes on.
func TestHTTPUnhandledRequestIsAJSONRPCError(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	session := p.session("2025-06-18")
	for _, tt := range []struct {
		version, body string
		code          int
		id            string
	}{
		{"2025-06-18", `{"jsonrpc":"2.0","id":5,"method":"foo/bar"}`, -32601, `5`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":"n","method":"notifications/initialized"}`, -32600, `"n"`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":6,"method":"tools/call"}`, -32600, `6`},
		{"2025-06-18", `{"jsonrpc":"2.0","method":"tools/list"}`, -32600, `null`},
		{"1999-01-01", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, -32600, `7`},
	} {
		resp, body := p.post(session, tt.version, tt.body)
		var m rawMessage
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal([]byte(body), &m) != nil || m.Error == nil || m.Error.Code != tt.code || string(m.ID) != tt.id {
			t.Errorf("%s (version %s): %s %q %s, want 400 with code %d and id %s", tt.body, tt.version, resp.Status, resp.Header.Get("Content-Type"), body, tt.code, tt.id)
		}
		if resp, body := p.post(session, "2025-06-18", `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"list_dir"`) {
			t.Fatalf("after %s: %s %s", tt.body, resp.Status, body)
		}
	}
	if resp, body := p.post(session, "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/foo"}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a notification the server does not know: %s %s, want 202", resp.Status, body)
	}
}
