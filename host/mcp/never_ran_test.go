package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: progress said "<tool> started in the sandbox" for calls
// that never ran: denied by a rule, declined by the client's user,
// refused for their arguments (it was sent before the round took the call
// through the approval rules). A call is told it started only once its
// tool starts.
func TestNoStartedProgressForCallsThatNeverRan(t *testing.T) {
	progress := make(chan string, 100)
	f := serve(t, "approvals: [{tool: list_dir, action: deny}, {tool: write_file, action: ask}]\n", &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params.ProgressToken.(string) + ": " + req.Params.Message
		},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "decline"}, nil
		}})
	for _, call := range []struct {
		token  string
		params *sdk.CallToolParams
	}{
		{"denied", &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}}},
		{"declined", &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "a"}}},
		{"bad", &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"text": 5}}},
		{"ran", &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"text": "a b"}}},
	} {
		call.params.SetProgressToken(call.token)
		res, err := f.client.CallTool(context.Background(), call.params)
		must(t, err)
		if res.IsError != (call.token != "ran") {
			t.Errorf("%s: %q", call.token, text(res))
		}
	}
	// The last call's progress comes after whatever the others were sent.
	for {
		select {
		case msg := <-progress:
			if !strings.HasPrefix(msg, "ran: ") {
				t.Errorf("progress of a call that never ran: %q", msg)
				continue
			}
			if !strings.HasPrefix(msg, "ran: count started") {
				t.Errorf("first progress of the call that ran: %q", msg)
			}
			return
		case <-time.After(10 * time.Second):
			t.Fatal("the call that ran was not told it started")
		}
	}
}

// Regression: a request with "id": null was dropped on stdio without an
// answer (the SDK takes it for a notification). It is refused, as any id
// that is neither a string nor a number is.
func TestStdioNullIDRefused(t *testing.T) {
	c := newRawClient(t, context.Background(), serve(t, "", nil).srv, "2025-06-18", `{}`)
	c.send(`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"list_dir","arguments":{}}}`)
	if m := c.replyTo(); string(m.ID) != "null" || m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "id null") {
		t.Errorf("a request with id null was answered %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := c.replyTo(); string(m.ID) != "3" || m.Error != nil {
		t.Errorf("ping after it: %v", m)
	}
}

// Regression: an MCP server that answered a call with a JSON-RPC error (a
// tool handler that returns a Go error, with the SDK's server) was
// reported to the model as a server that "failed during the call", the
// words of a crash. The server answered: the model reads an error result
// naming the server and its message.
func TestServerErrorAnswerIsAnErrorResult(t *testing.T) {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "odd", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, errors.New("the disk is on fire")
		})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	must(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn", Version: "1"}, nil).Connect(ctx, ct, nil)
	must(t, err)
	c := &conn{name: "odd", cs: cs, ended: ended(cs),
		dial: func(context.Context) (*sdk.ClientSession, error) { return nil, errors.New("no second connection") }}
	defer c.Close()
	out, isError, err := c.Call(ctx, "fail", []byte(`{}`))
	if err != nil || !isError || !strings.Contains(out, "MCP server odd answered the call with an error") ||
		!strings.Contains(out, "the disk is on fire") || strings.Contains(out, "failed during the call") {
		t.Errorf("Call = %q, %v, %v; want an error result naming the server's message", out, isError, err)
	}
}
