package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: a 405 for a method no route serves (PUT, DELETE, OPTIONS,
// PATCH) had no Allow header, which HTTP requires of a 405 (RFC 9110,
// 15.5.6), and said only that the method is not served; one for a method
// another route serves (GET of a state change) said "Method Not
// Allowed". Each 405 now has the route's methods in its Allow header and
// names them in its error.
func TestMethodNotAllowedNamesTheRoutesMethods(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPut, "/api/agents/w/pause", "POST"},
		{http.MethodDelete, "/api/agents/w", "GET, HEAD"},
		{http.MethodOptions, "/api/info", "GET, HEAD"},
		{http.MethodPatch, "/api/agents/w/approvals/c/deny", "POST"},
		{http.MethodGet, "/api/agents/w/resume", "POST"},
	} {
		req, err := http.NewRequest(c.method, f.http.URL+c.path, nil)
		must(t, err)
		req.Header.Set("Authorization", "Bearer "+f.srv.Token())
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		var e apiError
		f.decode(resp, http.StatusMethodNotAllowed, &e)
		if got := resp.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
		if !strings.Contains(e.Error, c.method) || !strings.Contains(e.Error, c.allow) {
			t.Errorf("%s %s: error %q names neither the method nor the route's %s", c.method, c.path, e.Error, c.allow)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("%s %s: a CORS header", c.method, c.path)
		}
	}
}
