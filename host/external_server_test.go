package host_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/mcp"
)

// runExternal runs an agent that calls shout twice, one call a turn, of
// the MCP server at url (every tool allowed, the agent file's sandbox
// timeout the given one), calling on with each event. It returns the
// results the model read.
func runExternal(t *testing.T, ctx context.Context, url, timeout string, on func(host.Event)) ([]conversation.Message, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`turns:
  - tool_calls: [{name: shout, input: {text: one}}]
  - tool_calls: [{name: shout, input: {text: two}}]
  - text: finished
`), 0o644); err != nil {
		t.Fatal(err)
	}
	af, err := host.ParseAgentFile([]byte(`name: uses-mcp
model: {provider: script, script: script.yaml}
workspace: ws
tools: [{module: builtin, only: [read_file]}]
sandbox: {timeout: `+timeout+`}
mcp: [{name: toy, url: "`+url+`"}]
approvals: [{tool: "*", action: allow}]
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: filepath.Join(dir, "cache"), Store: store, Connect: mcp.Connect})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	if _, err := eng.Run(ctx, host.RunOptions{Agent: af, ID: "a", AutoDeny: true, OnEvent: on}); err != nil {
		return nil, err
	}
	rec, err := store.Read("a")
	if err != nil {
		t.Fatal(err)
	}
	var results []conversation.Message
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool {
			results = append(results, m)
		}
	}
	return results, nil
}

// shoutServer serves, over Streamable HTTP, the tool shout.
func shoutServer(t *testing.T) *httptest.Server {
	type in struct {
		Text string `json:"text"`
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "toy", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "shout"}, func(_ context.Context, _ *sdk.CallToolRequest, in in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv
}

// Regression: a call of a server that had gone away was reported as the
// server failing during it, its effects unknown, though it never reached
// the server. It says it was not sent and changed nothing.
func TestExternalServerGoneCallNotSent(t *testing.T) {
	srv := shoutServer(t)
	results, err := runExternal(t, context.Background(), srv.URL, "5s", func(e host.Event) {
		if e.Type == host.EventToolEnd && e.Round == 1 {
			srv.CloseClientConnections()
			srv.Close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Text != "ONE" {
		t.Fatalf("results %+v", results)
	}
	if m := results[1]; !m.IsError || !strings.Contains(m.Text, "MCP server toy is unavailable, so the call was not sent and changed nothing") {
		t.Errorf("the call after the server went away: %q", m.Text)
	}
}

// Regression: a server that never answered kept the run from starting,
// forever. Its start is bounded by the time limit of a call, and the
// error names the server and what to check.
func TestExternalServerHangingAtStart(t *testing.T) {
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hung)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := runExternal(t, ctx, srv.URL, "1s", nil)
	if !errors.Is(err, host.ErrMCPServer) || !strings.Contains(err.Error(), "mcp server toy") ||
		!strings.Contains(err.Error(), "did not start and list its tools within 1s") ||
		!strings.Contains(err.Error(), "check that "+srv.URL+" answers MCP over Streamable HTTP") {
		t.Errorf("err = %v, want ErrMCPServer naming the server, the time limit and what to check", err)
	}
}
