package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: a path no route serves was answered, for a GET or a POST,
// {"error": "404 page not found"}, the mux's own words, which name
// neither the path nor where the routes are, where a PUT of it was told
// "nothing is served at PATH". Every such 404 now names the path, and
// says where the routes are listed.
func TestPathNoRouteServesIsNamedIn404(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for _, c := range []struct{ method, path string }{
		{"GET", "/nothing"}, {"GET", "/api/agents/w/"}, {"GET", "/api/agents/w/approvals/c"},
		{"POST", "/api/agents/w/kill"}, {"PUT", "/nothing"}, {"HEAD", "/api/nothing"},
	} {
		var body any
		if c.method == "POST" || c.method == "PUT" {
			body = struct{}{}
		}
		resp := f.doMethod(c.method, c.path, body)
		if c.method == "HEAD" {
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("HEAD %s: %s", c.path, resp.Status)
			}
			continue
		}
		var e apiError
		f.decode(resp, http.StatusNotFound, &e)
		if !strings.Contains(e.Error, "nothing is served at "+c.path) || !strings.Contains(e.Error, "http-api.md") {
			t.Errorf("%s %s: %q, want it to name the path and the routes' page", c.method, c.path, e.Error)
		}
	}
}
