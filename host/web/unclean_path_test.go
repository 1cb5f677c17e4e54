package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: a path that is not clean (an empty, "." or ".." segment)
// was answered by the mux with a 307 to its clean form and an HTML body.
// An API client got markup for its error, and one that follows redirects
// (Go's, with a POST's body) sent the request on to whatever the dots
// resolved to: a decision posted under one agent's path approved another
// agent's call. Such a path is now 400, in the API's JSON, redirected
// nowhere, for every method.
func TestUncleanPathIs400NotARedirect(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	f.awaiting("ap")
	for _, c := range []struct{ method, path string }{
		{"GET", "//agents"},
		{"GET", "//"},
		{"GET", "/api//agents"},
		{"GET", "/api/.//info"},
		{"GET", "/api/agents/x/../w"},
		{"GET", "/api/agents/w/./runs"},
		{"HEAD", "/api/agents/w/./runs"},
		{"GET", "/api/agents/w/events/..?follow=1"},
		{"POST", "/api/agents/w/approvals/../../ap/approvals/call_1_0/approve"},
		{"POST", "/api/agents/ap/approvals/./call_1_0/deny"},
		{"POST", "//api/agents/ap/snapshot"},
	} {
		var body any
		if c.method == "POST" {
			body = struct{}{}
		}
		resp := f.doMethod(c.method, c.path, body)
		if loc := resp.Header.Get("Location"); loc != "" || resp.Request.URL.RequestURI() != c.path {
			t.Errorf("%s %s: redirected to %s", c.method, c.path, resp.Request.URL)
		}
		if c.method == "HEAD" {
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("HEAD %s: %s %q", c.path, resp.Status, resp.Header.Get("Content-Type"))
			}
			continue
		}
		var e apiError
		f.decode(resp, http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, "not clean") {
			t.Errorf("%s %s: %q, want it to say the path is not clean", c.method, c.path, e.Error)
		}
	}
	var pending []map[string]any
	f.getJSON("/api/agents/ap/approvals", &pending)
	if len(pending) != 1 {
		t.Fatalf("a decision posted under agent w's path decided agent ap's call: %v", pending)
	}
}

// doMethod sends a request with the token, following redirects as Go's
// client does; a non-nil body is sent as JSON.
func (f *fixture) doMethod(method, path string, body any) *http.Response {
	f.t.Helper()
	rd := strings.NewReader("")
	if body != nil {
		rd = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, f.http.URL+path, rd)
	must(f.t, err)
	if body == nil {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
	}
	req.Header.Set("Authorization", "Bearer "+f.srv.Token())
	resp, err := http.DefaultClient.Do(req)
	must(f.t, err)
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}
