package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// Regression: a url server that restarted (or let its session expire)
// between two calls answers the next with 404, and the call failed with
// "session not found", the model told that what it changed was unknown,
// though it never ran; only the call after it was sent in a new session.
// The call is sent again in a new session, as MCP asks of a client, and
// runs once.
func TestServerOverHTTPRestartedAnswersTheNextCall(t *testing.T) {
	var runs atomic.Int32
	s := sdk.NewServer(&sdk.Implementation{Name: "toy", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "count"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		runs.Add(1)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "counted"}}}, nil, nil
	})
	var h atomic.Pointer[sdk.StreamableHTTPHandler]
	restart := func() { h.Store(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)) } // no session of before
	restart()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := Connect(ctx, host.MCPServer{Name: "toy", URL: srv.URL}, t.TempDir(), host.Limits{Timeout: host.Duration(time.Minute), Output: 64 << 10})
	must(t, err)
	defer tools.Close()
	for i := range 3 {
		if i > 0 {
			restart()
		}
		if out, isError, err := tools.Call(ctx, "count", json.RawMessage(`{}`)); err != nil || isError || out != "counted" {
			t.Errorf("call %d: %q, %v, %v", i+1, out, isError, err)
		}
		if n := runs.Load(); n != int32(i+1) {
			t.Errorf("after call %d the tool ran %d times", i+1, n)
		}
	}
}

// Regression: a url server that answers a request of a session it no
// longer has with 404 and a JSON-RPC error in the body (cairn mcp --http
// does, and so does the TypeScript SDK's server) had the call fail with
// that error, where a 404 with a body of text had it sent again in a new
// session: the SDK's client reads the body's error first and never sees
// that the session is gone. Whatever the body, the call is sent again in
// a new session and runs once.
func TestServerOverHTTPSessionGoneWithAJSONBody(t *testing.T) {
	f := serve(t, "", nil)
	var h atomic.Pointer[http.Handler]
	restart := func() { hh := f.srv.Handler(""); h.Store(&hh) } // a handler that has no session of before
	restart()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := Connect(ctx, host.MCPServer{Name: "cairn", URL: srv.URL}, t.TempDir(), host.Limits{Timeout: host.Duration(time.Minute), Output: 64 << 10})
	must(t, err)
	defer tools.Close()
	for i := range 3 {
		if i > 0 {
			for ss := range f.srv.srv.Sessions() { // the sessions of the handler before end
				ss.Close()
			}
			restart()
		}
		out, isError, err := tools.Call(ctx, "list_dir", json.RawMessage(`{}`))
		if err != nil || isError {
			t.Errorf("call %d: %q, %v, %v", i+1, out, isError, err)
		}
	}
	rec, err := f.store.Read("m")
	must(t, err)
	if rec.State.Round != 3 {
		t.Errorf("the calls made %d rounds, want 3", rec.State.Round)
	}
}
