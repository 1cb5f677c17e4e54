package main

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Regression: `cairn mcp --http` closed an HTTP session left idle (no
// request open) after an hour, and no flag set the hour. --idle-timeout
// sets it: a session of a client that holds no stream and makes no
// request is closed once idle that long, its next request answered 404.
func TestMCPHTTPIdleTimeoutClosesSession(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, _, _ := servedAgent(t, bin)
	cmd := exec.Command(bin, append(flags, "--http", "127.0.0.1:0", "--idle-timeout", "200ms")...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := serverURL(t, stderr)
	post := func(session, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		must(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	// The session is closed once idle: each look is a request, which
	// uses it, so the looks are further apart than the timeout. The wait
	// is bounded by a minute only to end the test should it never be.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		resp := post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session idle with --idle-timeout 200ms is still served a minute later: %s", resp.Status)
		}
	}
}

// --idle-timeout takes a duration, 0 or more; anything else is refused
// with exit 2, naming the flag and what it takes.
func TestMCPIdleTimeoutRefused(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"1x", "want a duration such as 30s"},
		{"-1s", "cannot be negative"},
		{"9999999h", "the longest is"},
	} {
		code, _, errOut := cairn(t, "mcp", "--workspace", t.TempDir(), "--store", t.TempDir(), "--http", "127.0.0.1:0", "--idle-timeout", tt.value)
		if code != exitUsage || !strings.Contains(errOut, "idle-timeout") || !strings.Contains(errOut, tt.want) {
			t.Errorf("--idle-timeout %s: exit %d, %q; want exit 2 saying %q", tt.value, code, errOut, tt.want)
		}
	}
}

// Regression: --idle-timeout without --http was taken and did nothing, as
// a stdio session has no idle time to bound; it is refused, saying so.
func TestMCPIdleTimeoutWithoutHTTPRefused(t *testing.T) {
	code, _, errOut := cairn(t, "mcp", "--workspace", t.TempDir(), "--store", t.TempDir(), "--idle-timeout", "5m")
	if code != exitUsage || !strings.Contains(errOut, "--idle-timeout is for sessions over HTTP") {
		t.Fatalf("--idle-timeout without --http: exit %d, %q; want exit 2 saying it is for HTTP", code, errOut)
	}
}
