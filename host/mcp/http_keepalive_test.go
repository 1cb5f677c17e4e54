package mcp

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Regression: a call over Streamable HTTP that ran for minutes with
// nothing to report sent nothing on its stream, not even its status, and
// a proxy in front that closes a connection silent for a while (nginx
// after 60 seconds) cut it, which stopped the call. Its stream has a
// comment line each time it has been silent for a while, which a client
// ignores, and the call goes on to its answer.
func TestHTTPLongCallStreamIsKeptAlive(t *testing.T) {
	defer func(d time.Duration) { streamKeepAlive = d }(streamKeepAlive)
	streamKeepAlive = 10 * time.Millisecond
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t: t, url: hs.URL}
	session := p.session("2025-06-18")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_and_wait","arguments":{"path":"w.txt","content":"w"}}}`))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req) // returns once the status has come
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("the call's answer: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != ": keep-alive\n" {
		t.Fatalf("the silent call's stream began %q (%v), want a comment line", line, err)
	}
}
