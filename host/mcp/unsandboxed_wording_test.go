package mcp

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: served by `cairn mcp`, an MCP server's tool, which runs
// outside the sandbox and is asked about when no approval rule matches
// it, was described as a sandboxed tool an `ask` rule matched: the
// question said "An approval rule of agent m says to ask", a denial that
// "the agent file's approval rules say a person must decide on it",
// progress that it "started in the sandbox", and the instructions that
// the tools "run in cairn's WebAssembly sandbox". Each says what is true.
func TestUnsandboxedToolWording(t *testing.T) {
	var question string
	progress := make(chan string, 10)
	f := serve(t, "mcp: [{name: toy, command: ["+toyServer(t)+"]}]\n", &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			question = req.Params.Message
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params.Message
		}})
	instructions := f.client.InitializeResult().Instructions
	for _, want := range []string{"MCP servers (toy)", "run outside cairn's sandbox", "cannot stage, show or undo"} {
		if !strings.Contains(instructions, want) {
			t.Errorf("the instructions do not say %q: %s", want, instructions)
		}
	}
	params := &sdk.CallToolParams{Name: "shout", Arguments: map[string]any{"text": "hey"}}
	params.SetProgressToken("p")
	res, err := f.client.CallTool(context.Background(), params)
	must(t, err)
	if text(res) != "HEY" {
		t.Fatalf("shout: %q", text(res))
	}
	if strings.Contains(question, "An approval rule") || !strings.Contains(question, "outside cairn's sandbox, on MCP server toy") {
		t.Errorf("the question: %q", question)
	}
	if msg := <-progress; msg != "shout started on MCP server toy, outside the sandbox" {
		t.Errorf("progress: %q", msg)
	}
	// A client that cannot be asked has the call denied, saying why.
	st, ct := sdk.NewInMemoryTransports()
	ss, err := f.srv.srv.Connect(context.Background(), st, nil)
	must(t, err)
	plain, err := sdk.NewClient(&sdk.Implementation{Name: "plain", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	must(t, err)
	defer func() { plain.Close(); ss.Wait() }()
	res, err = plain.CallTool(context.Background(), &sdk.CallToolParams{Name: "shout", Arguments: map[string]any{"text": "hey"}})
	must(t, err)
	if out := text(res); !res.IsError || strings.Contains(out, "approval rules say") ||
		!strings.Contains(out, "runs outside cairn's sandbox, on MCP server toy") || !strings.Contains(out, "{tool: shout, action: allow}") {
		t.Errorf("denied: %q", out)
	}
	// A sandboxed tool an ask rule matches is still asked about for the rule.
	g := serve(t, "approvals: [{tool: write_file, action: ask}]\n", &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			question = req.Params.Message
			return &sdk.ElicitResult{Action: "decline"}, nil
		}})
	g.call(t, "write_file", map[string]any{"path": "a.txt", "content": "a"})
	if !strings.Contains(question, "An approval rule of agent m says to ask") {
		t.Errorf("the question of an ask rule: %q", question)
	}
	if s := g.client.InitializeResult().Instructions; !strings.HasPrefix(s, "These tools run in cairn's WebAssembly sandbox") {
		t.Errorf("the instructions of sandboxed tools: %s", s)
	}
}
