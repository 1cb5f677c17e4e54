package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Regression: an agent id no agent has that begins sub-agents' ids (a
// sub-agent's name without its digest, lead.alpha) was answered 404 "not
// found" alone by every route, where the command line refuses it naming
// the agents it begins. Each route now answers 404 naming them, in its
// error and in "agents"; an id that begins none at a boundary (lead.alph)
// is not found alone.
func TestRoutesNameTheAgentsAnIDBegins(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.runLeadDelegatingToAlpha()
	var list []agentLine
	f.getJSON("/api/agents", &list)
	var child string
	for _, l := range list {
		if strings.HasPrefix(l.Agent, "lead.alpha-") {
			child = l.Agent
		}
	}
	if child == "" {
		t.Fatalf("no sub-agent lead.alpha-* in %+v", list)
	}
	routes := []struct{ method, path string }{
		{"GET", ""}, {"GET", "/children"}, {"GET", "/conversation"}, {"GET", "/runs"}, {"GET", "/events"},
		{"GET", "/diff"}, {"GET", "/approvals"}, {"POST", "/approvals/c1/approve"}, {"POST", "/approvals/c1/deny"},
		{"POST", "/resume"}, {"POST", "/pause"}, {"POST", "/snapshot"}, {"POST", "/fork"},
	}
	for _, rt := range routes {
		for _, id := range []string{"lead.alpha", "lead.alph"} {
			path := "/api/agents/" + id + rt.path
			var resp *http.Response
			if rt.method == "POST" {
				body := map[string]any{}
				if rt.path == "/fork" {
					body["as"] = "copy"
				}
				resp = f.post(path, body)
			} else {
				resp = f.do(path, nil, "")
			}
			var e apiError
			f.decode(resp, http.StatusNotFound, &e)
			names := id == "lead.alpha"
			if !strings.Contains(e.Error, `agent "`+id+`": not found`) || strings.Contains(e.Error, child) != names || slices.Contains(e.Agents, child) != names {
				t.Errorf("%s %s: %+v, want not found, naming %s: %v", rt.method, path, e, child, names)
			}
		}
	}
}
