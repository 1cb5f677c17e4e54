package mcp

import (
	"context"
	"strings"
	"testing"
)

// Regression: a question answered with no action, or with one MCP does
// not know, denied the call saying the client's user "dismissed the
// question ()", or repeating whatever the client sent, however long.
// The denial says the question was not answered yes, naming an unknown
// action quoted and cut short.
func TestQuestionAnsweredWithoutAKnownAction(t *testing.T) {
	for _, tt := range []struct{ result, want string }{
		{`{}`, "the MCP client answered the question with no action"},
		{`{"action":"cancel"}`, "the MCP client's user dismissed the question"},
		{`{"action":"` + strings.Repeat("y", 500) + `"}`, `the MCP client answered the question with an action MCP does not know (\"yyyy`},
	} {
		f := serve(t, askWrites, nil)
		c := newRawClient(t, context.Background(), f.srv, "2025-06-18", `{"elicitation":{}}`)
		q := askedCall(t, c, "1")
		c.send(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":` + tt.result + `}`)
		m := c.replyTo()
		res := string(m.Result)
		if !strings.Contains(res, `"isError":true`) || !strings.Contains(res, tt.want) || strings.Contains(res, "()") ||
			strings.Contains(res, strings.Repeat("y", 100)) {
			t.Errorf("answered %s: %s, want %q", tt.result, res, tt.want)
		}
	}
}
