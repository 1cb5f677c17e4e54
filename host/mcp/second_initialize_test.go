package mcp

import (
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
