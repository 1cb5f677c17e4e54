package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: a call stopped while it ran had the same result, "the run
// was cancelled while it ran", whether its client cancelled it, went
// away, ended its session with DELETE, or the server was stopped by a
// signal: a user could not tell what happened, nor whether to call it
// again. The result names what stopped it.
func TestStoppedCallSaysWhatStoppedIt(t *testing.T) {
	wait := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_and_wait","arguments":{"path":"w.txt","content":"w"}}}`
	staged := func(f *fixture) {
		waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "w.txt")
	}
	overHTTP := func(t *testing.T, stop func(f *fixture, url, session string)) string {
		f := serve(t, "", nil)
		hs := httptest.NewServer(f.srv.Handler(""))
		t.Cleanup(hs.Close)
		session := httpPoster{t, hs.URL}.session("2025-06-18")
		stop(f, hs.URL, session)
		return committedResult(t, f, 1)
	}
	results := map[string]string{}
	for _, tt := range []struct {
		name string
		want string
		stop func(t *testing.T) string
	}{
		{"the client cancelled it", "the MCP client cancelled it (notifications/cancelled)", func(t *testing.T) string {
			f := serve(t, "", nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "write_and_wait", Arguments: map[string]any{"path": "w.txt", "content": "w"}})
				done <- err
			}()
			staged(f)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled call returned %v", err)
			}
			return committedResult(t, f, 1)
		}},
		{"the client went away", "the MCP client went away: its HTTP request ended before it was answered", func(t *testing.T) string {
			return overHTTP(t, func(f *fixture, url, session string) {
				ctx, cancel := context.WithCancel(context.Background())
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(wait))
				must(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", session)
				req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
				done := make(chan struct{})
				go func() {
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
					close(done)
				}()
				staged(f)
				cancel()
				<-done
			})
		}},
		{"the client ended its session", "the MCP client ended its session (HTTP DELETE)", func(t *testing.T) string {
			return overHTTP(t, func(f *fixture, url, session string) {
				go httpPoster{t, url}.post(session, "2025-06-18", wait)
				staged(f)
				req, err := http.NewRequest(http.MethodDelete, url, nil)
				must(t, err)
				req.Header.Set("Mcp-Session-Id", session)
				resp, err := http.DefaultClient.Do(req)
				must(t, err)
				resp.Body.Close()
			})
		}},
		{"the server was stopped over HTTP", "the MCP server stopped serving this client (SIGTERM)", func(t *testing.T) string {
			return overHTTP(t, func(f *fixture, url, session string) {
				go httpPoster{t, url}.post(session, "2025-06-18", wait)
				staged(f)
				f.srv.Stop(errors.New("SIGTERM"))
			})
		}},
		{"the server was stopped", "the MCP server stopped serving this client (SIGTERM)", func(t *testing.T) string {
			f := serve(t, "", nil)
			ctx, cancel := context.WithCancelCause(context.Background())
			c := newRawClient(t, ctx, f.srv, "2025-06-18", `{}`)
			c.send(wait)
			staged(f)
			cancel(errors.New("SIGTERM"))
			<-c.done
			return committedResult(t, f, 1)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.stop(t)
			results[tt.want] = res
			if !strings.Contains(res, tt.want) || !strings.Contains(res, "none of its changes to the workspace were kept") {
				t.Errorf("the stopped call's result: %q, want it to say %q and that none of its changes were kept", res, tt.want)
			}
		})
	}
	seen := map[string]string{}
	for want, res := range results {
		if other, ok := seen[res]; ok {
			t.Errorf("%q and %q: the same result %q", want, other, res)
		}
		seen[res] = want
	}
}
