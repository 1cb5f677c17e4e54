package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Regression: logging/setLevel with a level MCP does not have ("nope",
// "DEBUG", none) was answered as a success, the client left to think it
// set one. It is invalid params (-32602), as MCP asks, naming the levels,
// on stdio and over HTTP; a level MCP has is set.
func TestSetLevelUnknownIsInvalidParams(t *testing.T) {
	bad := []string{
		`{"jsonrpc":"2.0","id":"a","method":"logging/setLevel","params":{"level":"nope"}}`,
		`{"jsonrpc":"2.0","id":"b","method":"logging/setLevel","params":{"level":"DEBUG"}}`,
		`{"jsonrpc":"2.0","id":"c","method":"logging/setLevel","params":{}}`,
	}
	good := `{"jsonrpc":"2.0","id":"ok","method":"logging/setLevel","params":{"level":"warning"}}`
	f := serve(t, "", nil)
	lines := append([]string{initLine("1", "2025-06-18", `{}`), `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, bad...)
	out := serveLines(t, f, append(lines, good)...)
	for i, line := range bad {
		if m := out[`"`+string(rune('a'+i))+`"`]; m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "emergency") {
			t.Errorf("stdio: %s: answered %v, want code -32602 naming the levels", line, m)
		}
	}
	if m := out[`"ok"`]; m.Error != nil || m.Result == nil {
		t.Errorf("stdio: %s: answered %v", good, m)
	}
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	session := p.session("2025-06-18")
	for _, line := range bad {
		_, body := p.post(session, "2025-06-18", line)
		_, data, _ := strings.Cut(body, "data: ") // one event, the answer
		var m rawMessage
		if err := json.Unmarshal([]byte(data), &m); err != nil || m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("HTTP: %s: %s, want code -32602", line, body)
		}
	}
	if resp, body := p.post(session, "2025-06-18", good); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result":{}`) {
		t.Errorf("HTTP: %s: %s %s", good, resp.Status, body)
	}
}
