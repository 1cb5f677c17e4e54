package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: over Streamable HTTP the SDK's own refusals were answered
// in plain text (http.Error): a POST of the wrong Content-Type or Accept,
// a GET without the event stream's Accept or without a session, a DELETE
// without a session, a session id the server has not, an
// Mcp-Protocol-Version it does not speak on a GET or DELETE, a method
// the endpoint does not serve, a Last-Event-ID (cairn keeps no events to
// resume a stream with), a second standalone stream. A client speaking
// JSON-RPC read nothing of what was wrong. Each is a JSON-RPC error, with
// the SDK's status (and Allow header), that says what was wrong and what
// to send instead; a POST's names its request's id.
func TestHTTPSDKRefusalsAreJSONRPCErrors(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	do := func(method, body string, headers map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, hs.URL, strings.NewReader(body))
		must(t, err)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		return resp
	}
	resp := do(http.MethodPost, initLine("1", "2025-06-18", `{}`), map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	resp = do(http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"})
	resp.Body.Close()
	// The session's standalone stream, held, for a second to be refused.
	held := do(http.MethodGet, "", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": session})
	defer held.Body.Close()
	if held.StatusCode != http.StatusOK {
		t.Fatalf("standalone stream: %s", held.Status)
	}

	call := `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`
	js, stream := "application/json", "text/event-stream"
	both := "application/json, text/event-stream"
	for _, c := range []struct {
		name, method, body string
		headers            map[string]string
		status             int
		id                 string
		says               []string
	}{
		{"POST not of JSON", "POST", call, map[string]string{"Content-Type": "text/plain", "Accept": both, "Mcp-Session-Id": session},
			415, "42", []string{`Content-Type "text/plain"`, "Content-Type: application/json"}},
		{"POST without Content-Type", "POST", call, map[string]string{"Accept": both},
			415, "42", []string{"Content-Type: application/json"}},
		{"POST accepting JSON only", "POST", call, map[string]string{"Content-Type": js, "Accept": js, "Mcp-Session-Id": session},
			400, "42", []string{`Accept "application/json"`, "Accept: application/json, text/event-stream"}},
		{"POST of an unknown session", "POST", call, map[string]string{"Content-Type": js, "Accept": both, "Mcp-Session-Id": "nosuch"},
			404, "42", []string{`session "nosuch"`, "initialize", "without an Mcp-Session-Id"}},
		{"POST with Last-Event-ID", "POST", call, map[string]string{"Content-Type": js, "Accept": both, "Mcp-Session-Id": session, "Last-Event-ID": "x_1"},
			400, "42", []string{"Last-Event-ID", "send the POST without it"}},
		{"GET accepting JSON only", "GET", "", map[string]string{"Accept": js, "Mcp-Session-Id": session},
			400, "null", []string{`Accept "application/json"`, "Accept: text/event-stream"}},
		{"GET without a session", "GET", "", map[string]string{"Accept": stream},
			400, "null", []string{"without an Mcp-Session-Id", "initialize"}},
		{"GET of an unknown session", "GET", "", map[string]string{"Accept": stream, "Mcp-Session-Id": "nosuch"},
			404, "null", []string{`session "nosuch"`, "initialize"}},
		{"GET of a protocol version not spoken", "GET", "", map[string]string{"Accept": stream, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "1999-01-01"},
			400, "null", []string{`Mcp-Protocol-Version "1999-01-01"`, "2025-06-18", "send the version initialize"}},
		{"GET with Last-Event-ID", "GET", "", map[string]string{"Accept": stream, "Mcp-Session-Id": session, "Last-Event-ID": "0_5"},
			400, "null", []string{`Last-Event-ID "0_5"`, "keeps no events", "without Last-Event-ID"}},
		{"a second standalone stream", "GET", "", map[string]string{"Accept": stream, "Mcp-Session-Id": session},
			409, "null", []string{"standalone stream", "one"}},
		{"DELETE without a session", "DELETE", "", nil,
			400, "null", []string{"without an Mcp-Session-Id"}},
		{"DELETE of an unknown session", "DELETE", "", map[string]string{"Mcp-Session-Id": "nosuch"},
			404, "null", []string{`session "nosuch"`}},
		{"DELETE of a protocol version not spoken", "DELETE", "", map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "1999-01-01"},
			400, "null", []string{`Mcp-Protocol-Version "1999-01-01"`}},
		{"PUT", "PUT", call, map[string]string{"Content-Type": js},
			405, "null", []string{"PUT", "POST", "GET", "DELETE"}},
	} {
		resp := do(c.method, c.body, c.headers)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		must(t, err)
		var m struct {
			Version string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal(body, &m) != nil || m.Version != "2.0" || m.Error == nil || m.Error.Code != -32600 || string(m.ID) != c.id {
			t.Errorf("%s: %s %q %s, want %d and a JSON-RPC error (-32600) to id %s", c.name, resp.Status, resp.Header.Get("Content-Type"), body, c.status, c.id)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(m.Error.Message, s) {
				t.Errorf("%s: %q, want it to say %q", c.name, m.Error.Message, s)
			}
		}
		if c.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, POST, DELETE" {
			t.Errorf("%s: Allow %q", c.name, resp.Header.Get("Allow"))
		}
	}

	// The Go SDK's client shows why.
	_, err := sdk.NewClient(&sdk.Implementation{Name: "http", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1, HTTPClient: &http.Client{Transport: withHeaders{"Accept": "application/json"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "Accept: application/json, text/event-stream") {
		t.Errorf("a client that accepts JSON only: %v, want it to say what to accept", err)
	}
}
