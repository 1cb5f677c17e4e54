package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Regression: a second initialize in a session was answered with code 0,
// which is no JSON-RPC code and none of those docs/mcp.md lists. It is an
// invalid request (-32600), saying so, and the session goes on.
func TestSecondInitializeIsAnInvalidRequest(t *testing.T) {
	out := serveLines(t, serve(t, "", nil), initLine(`"first"`, "2025-06-18", `{}`),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`, initLine(`"second"`, "2025-06-18", `{}`),
		`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
	if m := out[`"second"`]; m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "initialize") {
		t.Errorf("a second initialize: %v", m)
	}
	if m := out[`"after"`]; m.Error != nil || m.Result == nil {
		t.Errorf("tools/list after it: %v", m)
	}
}

// Regression: an initialize whose params the SDK cannot read (a
// protocolVersion that is no string, capabilities that are no object,
// params null) was answered with code 0, which is no JSON-RPC code, on
// stdio and over HTTP. It is invalid params (-32602), naming the
// request's id (over HTTP, with status 400), and a client may initialize
// after it.
func TestInitializeWithUnreadableParamsIsInvalidParams(t *testing.T) {
	bad := []string{
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":7,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"b","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":[],"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"c","method":"initialize","params":null}`,
	}
	f := serve(t, "", nil)
	out := serveLines(t, f, append(bad, initLine(`"ok"`, "2025-06-18", `{}`))...)
	for i, line := range bad {
		id := `"` + string(rune('a'+i)) + `"`
		if m := out[id]; m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("stdio: %s: answered %v, want code -32602", line, m)
		}
	}
	if m := out[`"ok"`]; m.Result == nil {
		t.Errorf("stdio: initialize after them: %v", m)
	}
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	for i, line := range bad {
		resp, body := p.post("", "", line)
		var m rawMessage
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal([]byte(body), &m) != nil || m.Error == nil ||
			m.Error.Code != -32602 || string(m.ID) != `"`+string(rune('a'+i))+`"` {
			t.Errorf("HTTP: %s: %s %s, want 400 with code -32602", line, resp.Status, body)
		}
	}
	p.session("2025-06-18")
}
