package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// httpToy serves, over Streamable HTTP, the test server's tools shout,
// huge and hang.
func httpToy(t *testing.T) (url string) {
	type hugeIn struct {
		Bytes int `json:"bytes"`
	}
	type shoutIn struct {
		Text string `json:"text"`
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "toy", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "huge"}, func(_ context.Context, _ *sdk.CallToolRequest, in hugeIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("h", in.Bytes)}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "hang"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	sdk.AddTool(s, &sdk.Tool{Name: "shout"}, func(_ context.Context, _ *sdk.CallToolRequest, in shoutIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Regression (huge answers, hanging calls): a server reached over
// Streamable HTTP has its answers capped at the sandbox output once read,
// and its calls bounded by the sandbox timeout, as a command's are.
func TestServerOverHTTPIsCappedAndTimed(t *testing.T) {
	url := httpToy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results, res, _, err := runServerCalls(t, ctx, "{output: 64KiB, timeout: 1s}", "url: "+url,
		"{name: huge, input: {bytes: 100000}}", "{name: hang, input: {}}", "{name: shout, input: {text: hi}}")
	must(t, err)
	if m := results[0]; !m.IsError || !strings.Contains(m.Text, "more than the output limit of 65536 bytes") {
		t.Errorf("huge: %.300q", m.Text)
	}
	if m := results[1]; !m.IsError || !strings.Contains(m.Text, "ran past its time limit of 1s") {
		t.Errorf("hang: %q", m.Text)
	}
	if m := results[2]; m.IsError || m.Text != "HI" {
		t.Errorf("shout: %q", m.Text)
	}
	if res.Status != host.StatusDone {
		t.Errorf("run %s: %s", res.Status, res.Reason)
	}
}
