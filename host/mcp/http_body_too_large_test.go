package mcp

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: a POST over the SDK's bound of 4 MiB (a call with large
// arguments) was answered by the SDK with a plain-text 413, which the Go
// SDK's client takes for a broken connection: its session ended, and
// every later call failed with "client is closing". The call is answered
// with a JSON-RPC error saying the bound, and the session goes on, as on
// stdio.
func TestHTTPBodyTooLargeKeepsTheSession(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
	must(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "big.txt", "content": strings.Repeat("x", 5<<20)}})
	if err == nil || !strings.Contains(err.Error(), "the POST's body is over 4194304 bytes") {
		t.Errorf("the call too large: %v, want an error saying the bound", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("the call after it: %v %v", err, res)
	}
}
