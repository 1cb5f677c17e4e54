package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// killableDialer dials loopback until kill, which closes every connection
// it made and refuses any more: a client process killed.
type killableDialer struct {
	mu     sync.Mutex
	conns  []net.Conn
	killed bool
}

func (d *killableDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.killed {
		return nil, errors.New("the client was killed")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *killableDialer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.killed = true
	for _, c := range d.conns {
		c.Close()
	}
}

// httpSessionLive reports whether the server has a client session id.
func httpSessionLive(s *Server, id string) bool {
	for ss := range s.srv.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// Regression: over Streamable HTTP, the session of a client that went
// away without a DELETE (its process killed) was never closed: it stayed
// in memory for the server's life, with a goroutine waiting for its end.
// A session left idle, no request of its client open, is closed, and
// what the server kept of it freed.
func TestHTTPVanishedClientSessionClosed(t *testing.T) {
	f := serve(t, "", nil)
	f.srv.opts.SessionIdle = 500 * time.Millisecond
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	ctx := context.Background()
	d := &killableDialer{}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.dial}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "vanishing", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	must(t, err)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	must(t, err)
	if res.IsError {
		t.Fatalf("list_dir: %s", text(res))
	}
	id := cs.ID()
	if !httpSessionLive(f.srv, id) {
		t.Fatalf("session %s is not served", id)
	}
	d.kill()
	deadline := time.Now().Add(10 * time.Second)
	for httpSessionLive(f.srv, id) {
		if time.Now().After(deadline) {
			t.Fatalf("the session of a client killed is still served 10 s later (idle after %s)", f.srv.opts.SessionIdle)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		f.srv.mu.Lock()
		ends, uses := len(f.srv.ends), len(f.srv.uses)
		f.srv.mu.Unlock()
		if ends == 0 && uses == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed session is still kept: %d session ends, %d uses", ends, uses)
		}
		time.Sleep(50 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request of the closed session: %s, want 404", resp.Status)
	}
	// A request of a session there is not is not kept track of.
	f.srv.mu.Lock()
	uses := len(f.srv.uses)
	f.srv.mu.Unlock()
	if uses != 0 {
		t.Errorf("a request of no session is kept track of: %d uses", uses)
	}
}

// A live client that makes no call for longer than the idle time, but
// holds its standalone stream open, keeps its session: its next call is
// answered.
func TestHTTPIdleClientWithStreamKeepsSession(t *testing.T) {
	f := serve(t, "", nil)
	f.srv.opts.SessionIdle = 300 * time.Millisecond
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "idle", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
	must(t, err)
	defer cs.Close()
	time.Sleep(2 * time.Second)
	if !httpSessionLive(f.srv, cs.ID()) {
		t.Fatalf("the session of a live client holding its stream was closed after %s idle", f.srv.opts.SessionIdle)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	must(t, err)
	if res.IsError {
		t.Errorf("list_dir after 2 s idle: %s", text(res))
	}
}

// A negative SessionIdle (`cairn mcp --idle-timeout 0`) closes no
// session however long it is idle; one gone is forgotten all the same.
func TestHTTPSessionIdleNegativeNeverCloses(t *testing.T) {
	f := serve(t, "", nil)
	f.srv.opts.SessionIdle = -1
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	id := p.session("2025-06-18")
	f.srv.sweepIdle(time.Now().Add(1000*time.Hour), idlePeriod(f.srv.opts.SessionIdle))
	if resp, body := p.post(id, "2025-06-18", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("a session idle for 1000 hours with SessionIdle < 0: %s %s", resp.Status, body)
	}
	f.srv.mu.Lock()
	f.srv.uses["gone"] = &sessionUse{}
	f.srv.mu.Unlock()
	f.srv.sweepIdle(time.Now(), idlePeriod(f.srv.opts.SessionIdle))
	f.srv.mu.Lock()
	_, kept := f.srv.uses["gone"]
	f.srv.mu.Unlock()
	if kept {
		t.Error("a session gone is still kept track of")
	}
}
