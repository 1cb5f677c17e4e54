package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Regression: over Streamable HTTP, a request without a session that was
// not initialize (a client that skipped it, or lost its session id) was
// answered with code 0, which is no JSON-RPC code. It is refused with
// 400 and -32600, as on stdio, saying that initialize comes first; an
// initialize, a ping, and a request of protocol 2026-07-28 (its session
// in _meta) still pass.
func TestHTTPRequestBeforeInitialize(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	post := func(body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		must(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		must(t, err)
		return resp.StatusCode, string(b)
	}
	status, body := post(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	var m rawMessage
	if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &m) != nil || m.Error == nil || m.Error.Code != -32600 ||
		string(m.ID) != "7" || !strings.Contains(m.Error.Message, `"tools/list" before initialize`) {
		t.Errorf("tools/list without a session: %d %s", status, body)
	}
	if status, body := post(initLine("1", "2025-06-18", `{}`)); status != http.StatusOK || !strings.Contains(body, `"protocolVersion"`) {
		t.Errorf("initialize: %d %s", status, body)
	}
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	if status, body := post(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":` + meta + `}}`); strings.Contains(body, "before initialize") || strings.Contains(body, `"code":0`) {
		t.Errorf("tools/list of protocol 2026-07-28: %d %s", status, body)
	}
}
