package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// noRedirects is a client that shows a redirect rather than following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// login opens the server's one-time login link as a browser does and
// returns the answer, its body read.
func (f *fixture) login(method string) (*http.Response, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.http.URL+f.srv.LoginPath(), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// loginCookie opens the login link and returns the cookie it sets.
func (f *fixture) loginCookie() *http.Cookie {
	f.t.Helper()
	resp, body := f.login(http.MethodGet)
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 {
		f.t.Fatalf("login: %s %v\n%s", resp.Status, resp.Cookies(), body)
	}
	return resp.Cookies()[0]
}

// The login cookie holds a secret of its own that grants reads only: not
// the token, so a service on another port of the host, which the browser
// sends it to, cannot make it a bearer token. Its name holds the port, so
// two servers on one host keep a cookie each.
func TestCookieGrantsReadsOnlyAndNamesItsPort(t *testing.T) {
	f := newFixture(t, Config{})
	f.run("w", doneAgent, doneScript)
	c := f.loginCookie()
	port := f.http.URL[strings.LastIndex(f.http.URL, ":")+1:]
	if c.Value == f.srv.Token() || strings.Contains(c.Value, f.srv.Token()) || !strings.Contains(c.Name, port) ||
		!c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login cookie %s=%s (port %s), token %s", c.Name, c.Value, port, f.srv.Token())
	}
	cookie := c.Name + "=" + c.Value
	if resp := f.do("/api/agents", nil, "", "Cookie", cookie); resp.StatusCode != http.StatusOK {
		t.Errorf("a read with the cookie: %s", resp.Status)
	}
	for _, auth := range []string{"Bearer " + c.Value, ""} {
		if resp := f.do("/api/agents/w/snapshot", struct{}{}, auth, "Cookie", cookie); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a state change with the cookie and %q: %s", auth, resp.Status)
		}
	}
	if resp := f.do("/api/agents", nil, "Bearer "+c.Value); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the cookie's value as the token: %s", resp.Status)
	}
	if resp := f.do("/api/agents", nil, "", "Cookie", c.Name+"="+f.srv.Token()); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the token as the cookie: %s", resp.Status)
	}
	other := newFixture(t, Config{})
	if oc := other.loginCookie(); oc.Name == c.Name || oc.Value == c.Value {
		t.Errorf("two servers on one host set the same cookie %s", oc.Name)
	}
}

// The login link answers with a page of this server that hands the token
// to the tab and goes on to the web view itself: no redirect, so a link
// clicked on another site gets the SameSite=Strict cookie on the next
// navigation, and the token never is in a URL.
func TestLoginFromAnotherSitePutsNoTokenInAURL(t *testing.T) {
	f := newFixture(t, Config{})
	resp, body := f.login(http.MethodGet)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Location") != "" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("login: %s, Location %q, %s", resp.Status, resp.Header.Get("Location"), resp.Header.Get("Content-Type"))
	}
	if strings.Contains(body, "#token=") || !strings.Contains(body, `content="`+f.srv.Token()+`"`) ||
		!strings.Contains(body, `src="/assets/login.js"`) || strings.Contains(body, "<script>") {
		t.Fatalf("login page:\n%s", body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("login page CSP %q", csp)
	}
	// The page's script loads before the cookie reaches the server.
	js := f.do("/assets/login.js", nil, "")
	b, _ := io.ReadAll(js.Body)
	if js.StatusCode != http.StatusOK || !strings.Contains(string(b), "sessionStorage") || !strings.Contains(string(b), "location.replace") {
		t.Fatalf("login script: %s\n%s", js.Status, b)
	}
}

// HEAD, as `curl -I` and link previewers send it, does not use up the
// one-time login link; only a GET does.
func TestHeadDoesNotUseTheLoginLink(t *testing.T) {
	f := newFixture(t, Config{})
	if resp, _ := f.login(http.MethodHead); resp.StatusCode != http.StatusMethodNotAllowed || len(resp.Cookies()) != 0 ||
		resp.Header.Get("Allow") != http.MethodGet {
		t.Fatalf("HEAD of the login link: %s %v, Allow %q", resp.Status, resp.Cookies(), resp.Header.Get("Allow"))
	}
	if resp, body := f.login(http.MethodGet); resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 {
		t.Fatalf("GET of the login link after a HEAD: %s\n%s", resp.Status, body)
	}
}
