package web

import (
	"net/http"
	"strings"
	"testing"
)

// An agent id in the path that cannot be one (checkpoint.CheckID) is 400
// on every route that names an agent, reads and state changes alike: the
// reads and pause once looked the agent up first and said 404. A valid
// id of no agent stays 404 ("-x" is one: an id may begin with '-').
func TestInvalidAgentIDIs400(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	routes := []struct{ method, tail string }{
		{"GET", ""}, {"GET", "/conversation"}, {"GET", "/runs"}, {"GET", "/events"},
		{"GET", "/events?follow=1"}, {"GET", "/diff"}, {"GET", "/approvals"},
		{"POST", "/approvals/call_1_0/approve"}, {"POST", "/approvals/call_1_0/deny"},
		{"POST", "/resume"}, {"POST", "/pause"}, {"POST", "/snapshot"}, {"POST", "/fork"},
	}
	for _, tt := range []struct {
		id     string
		status int
	}{
		{"..%2Fw", http.StatusBadRequest},
		{"a%00b", http.StatusBadRequest},
		{".hidden", http.StatusBadRequest},
		{strings.Repeat("a", 300), http.StatusBadRequest},
		{"-x", http.StatusNotFound},
	} {
		for _, r := range routes {
			req, err := http.NewRequest(r.method, f.http.URL+"/api/agents/"+tt.id+r.tail, nil)
			must(t, err)
			if r.method == "POST" {
				req.Header.Set("Authorization", "Bearer "+f.srv.Token())
			}
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			var e apiError
			f.decode(resp, tt.status, &e)
			if tt.status == http.StatusBadRequest && !strings.Contains(e.Error, "agent id") {
				t.Errorf("%s %s: %q, want it to say the agent id is bad", r.method, req.URL, e.Error)
			}
		}
	}
}
