// Command toyserver is a small MCP server for the tests of MCP servers as
// tools of a cairn agent, spoken to over stdio. Its tools: shout answers
// its text in capitals; hang writes hang.started in its directory and
// waits until the call is cancelled; die exits mid-call.
package main

import (
	"context"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type shoutIn struct {
	Text string `json:"text" jsonschema:"what to shout"`
}

type empty struct{}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "toy", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Answers its text in capitals."},
		func(_ context.Context, _ *mcp.CallToolRequest, in shoutIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Runs until the call is cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			os.WriteFile("hang.started", nil, 0o644)
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Exits during the call."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}
