package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: over Streamable HTTP, a DELETE of a session did not stop
// its running call: the DELETE waited for the call's time limit, and the
// agent's turn stayed held. Ending a session stops its calls at once, as
// the end of a client's input does on stdio.
func TestHTTPDeleteStopsSessionCalls(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	ctx := context.Background()
	connect := func() *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "http", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
		must(t, err)
		return cs
	}
	first := connect()
	defer first.Close()
	go first.CallTool(ctx, &sdk.CallToolParams{Name: "write_and_wait", Arguments: map[string]any{"path": "w.txt", "content": "w"}})
	waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "w.txt")
	deleted := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
		req.Header.Set("Mcp-Session-Id", first.ID())
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		deleted <- time.Since(start)
	}()
	select {
	case d := <-deleted:
		if d > 10*time.Second {
			t.Errorf("the DELETE took %s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the DELETE of a session with a call running is not answered within 20 s")
	}
	// The turn is free: another session's call runs.
	second := connect()
	defer second.Close()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := second.CallTool(cctx, &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	must(t, err)
	if res.IsError {
		t.Errorf("list_dir after the DELETE: %s", text(res))
	}
	rec, err := f.store.Read("m")
	must(t, err)
	if m := rec.State.Messages[1]; rec.State.Round != 2 || !m.IsError || !strings.Contains(m.Text, "ended its session (HTTP DELETE)") {
		t.Errorf("round %d, the stopped call's result %+v", rec.State.Round, m)
	}
}

// Regression: Streamable HTTP did not check Origin (MCP: a server MUST,
// against DNS rebinding): a POST from a page of http://evil.example got a
// session. An Origin that is not the server's own, or a loopback one, is
// refused with 403.
func TestHTTPForeignOriginRefused(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	body := initLine("1", "2025-06-18", `{}`)
	for origin, want := range map[string]int{
		"http://evil.example":                   http.StatusForbidden,
		"https://evil.example:443":              http.StatusForbidden,
		"null":                                  http.StatusForbidden,
		"http://" + hs.Listener.Addr().String(): http.StatusOK,
		"http://localhost:6274":                 http.StatusOK,
		"":                                      http.StatusOK,
	} {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %q: %s, want %d", origin, resp.Status, want)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); want == http.StatusForbidden && id != "" {
			t.Errorf("Origin %q was given session %s", origin, id)
		}
	}
}
