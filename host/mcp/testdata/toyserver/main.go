// Command toyserver is a small MCP server for the tests of MCP servers as
// tools of a cairn agent, spoken to over stdio. Its tools: shout answers
// its text in capitals; huge answers that many bytes of text; hang writes
// hang.started (its pid) in its directory and waits until the call is
// cancelled; die exits mid-call; picture answers a line of text, an image
// of 4,096 bytes and a resource of 100 bytes.
//
// Its argument, if any, is how it misbehaves: hang-at-start never answers
// (not even initialize), nor reads its stdin, and writes its pid to
// start.pid in its directory; start-once serves only if it has not been
// started in its directory before (it leaves a file, started, there).
package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type shoutIn struct {
	Text string `json:"text" jsonschema:"what to shout"`
}

type hugeIn struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes to answer"`
}

type empty struct{}

func main() {
	switch mode := strings.Join(os.Args[1:], " "); mode {
	case "hang-at-start":
		os.WriteFile("start.pid", []byte(strconv.Itoa(os.Getpid())), 0o644)
		time.Sleep(time.Hour)
	case "start-once":
		if _, err := os.Stat("started"); err == nil {
			os.Exit(4)
		}
		os.WriteFile("started", nil, 0o644)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "toy", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Answers its text in capitals."},
		func(_ context.Context, _ *mcp.CallToolRequest, in shoutIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "huge", Description: "Answers that many bytes of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in hugeIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("h", in.Bytes)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Runs until the call is cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			os.WriteFile("hang.started", []byte(strconv.Itoa(os.Getpid())), 0o644)
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "picture", Description: "Answers a line of text, an image and a resource."},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a red dot:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte(strings.Repeat("\x89PNG", 1024))},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///dot.bin", MIMEType: "application/octet-stream", Blob: make([]byte, 100)}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///dot.txt", MIMEType: "text/plain", Text: "one red dot"}},
			}}, nil, nil
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
