package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Every state-changing route, with a body it accepts.
var mutations = []string{
	"/api/agents/ap/approvals/call_1_0/approve",
	"/api/agents/ap/approvals/call_1_0/deny",
	"/api/agents/ap/resume",
	"/api/agents/ap/pause",
	"/api/agents/ap/snapshot",
	"/api/agents/ap/fork",
}

// A state change needs the token in the Authorization header, from this
// server's origin; a cookie, a wrong token or another site's Origin is
// refused and changes nothing.
func TestStateChangesNeedTheTokenAndTheOrigin(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	c := f.loginCookie()
	cookie := c.Name + "=" + c.Value
	for _, path := range mutations {
		for name, resp := range map[string]*http.Response{
			"no token":      f.do(path, struct{}{}, ""),
			"wrong token":   f.do(path, struct{}{}, "Bearer "+strings.Repeat("0", 64)),
			"cookie only":   f.do(path, struct{}{}, "", "Cookie", cookie),
			"other origin":  f.do(path, struct{}{}, "Bearer "+f.srv.Token(), "Origin", "http://evil.example"),
			"origin scheme": f.do(path, struct{}{}, "Bearer "+f.srv.Token(), "Origin", "null"),
		} {
			want := http.StatusUnauthorized
			if strings.Contains(name, "origin") {
				want = http.StatusForbidden
			}
			if resp.StatusCode != want {
				t.Errorf("%s with %s: %s, want %d", path, name, resp.Status, want)
			}
		}
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodOptions} {
		req, _ := http.NewRequest(method, f.http.URL+"/api/agents/ap/resume", nil)
		req.Header.Set("Authorization", "Bearer "+f.srv.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: %s, want 405 and no CORS", method, resp.Status)
		}
	}
	var v agentView
	f.getJSON("/api/agents/ap", &v)
	if v.Status != "awaiting_approval" || len(v.Awaiting) != 1 || len(v.Bookmarks) != 0 {
		t.Fatalf("a refused request changed the agent: %+v", v)
	}
	f.decode(f.post("/api/agents/ap/snapshot", struct{}{}), http.StatusOK, nil)
}

// A loopback server answers only to a loopback Host, so a page of another
// name that resolves to 127.0.0.1 (DNS rebinding) cannot read it.
func TestLoopbackRefusesOtherHosts(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for host, ok := range map[string]bool{
		"evil.example": false, "evil.example:80": false, "127.0.0.1.evil.example": false, "10.0.0.1:7878": false,
		"localhost:7878": true, "127.0.0.1": true, "[::1]:7878": true, "LOCALHOST": true,
	} {
		resp := f.do("/api/agents", nil, "", "Host", host)
		if got := resp.StatusCode == http.StatusOK; got != ok {
			t.Errorf("Host %s: %s", host, resp.Status)
		}
	}
}

// Beyond loopback every request needs the token, in the header or in the
// cookie the one-time login link sets; the link works once.
func TestBeyondLoopbackEveryRequestNeedsTheToken(t *testing.T) {
	f := newFixture(t, Config{})
	f.run("w", doneAgent, doneScript)
	for _, path := range []string{"/", "/assets/app.js", "/api/agents", "/api/agents/w/events", "/api/info"} {
		if resp := f.do(path, nil, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %s", path, resp.Status)
		}
		if resp := f.do(path, nil, "Bearer "+f.srv.Token()); resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the token: %s", path, resp.Status)
		}
	}
	c := f.loginCookie()
	if resp := f.do("/api/agents", nil, "", "Cookie", c.Name+"="+c.Value); resp.StatusCode != http.StatusOK {
		t.Errorf("with the login cookie: %s", resp.Status)
	}
	if resp := f.do(f.srv.LoginPath(), nil, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the login link a second time: %s", resp.Status)
	}
	if resp := f.do("/login?once=x", nil, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a wrong login link: %s", resp.Status)
	}
	// Beyond loopback a Host is not checked: the token guards it.
	if resp := f.do("/api/agents", nil, "Bearer "+f.srv.Token(), "Host", "cairn.example"); resp.StatusCode != http.StatusOK {
		t.Errorf("with another Host: %s", resp.Status)
	}
}

// A read-only server refuses every state change, even with the token,
// says so, and tells the page to show no button.
func TestReadOnlyRefusesMutations(t *testing.T) {
	f := newFixture(t, Config{Loopback: true, ReadOnly: true})
	f.awaiting("ap")
	for _, path := range mutations {
		var e apiError
		f.decode(f.post(path, struct{}{}), http.StatusForbidden, &e)
		if !strings.Contains(e.Error, "read-only") {
			t.Errorf("%s: %q", path, e.Error)
		}
	}
	var info struct {
		ReadOnly bool `json:"read_only"`
	}
	f.getJSON("/api/info", &info)
	var v agentView
	f.getJSON("/api/agents/ap", &v)
	if !info.ReadOnly || v.Status != "awaiting_approval" || len(v.Awaiting) != 1 {
		t.Fatalf("info %+v, agent %+v", info, v)
	}
}

// The page and its assets are embedded, small, and served with a policy
// that keeps scripts to the server's own.
func TestAssets(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	total := 0
	for path, ct := range map[string]string{"/": "text/html", "/assets/app.js": "text/javascript", "/assets/style.css": "text/css"} {
		resp := f.do(path, nil, "")
		b, _ := io.ReadAll(resp.Body)
		total += len(b)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || len(b) == 0 {
			t.Errorf("%s: %s %s", path, resp.Status, resp.Header.Get("Content-Type"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
	}
	if total > 200<<10 {
		t.Errorf("the web view is %d bytes, want well under 200 KB", total)
	}
}
