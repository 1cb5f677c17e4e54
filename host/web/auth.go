package web

import (
	"crypto/subtle"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/cairnrun/cairn/internal/httpauth"
)

// cookieName is the name of the cookie the login link sets, which
// authorizes reads only. A browser sends a host's cookies to every port
// of it, so the name holds the port the browser reached the server on:
// two servers on one host then keep a cookie each, not one that each
// overwrites.
func cookieName(r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return "cairn_read_" + port
	}
	return "cairn_read"
}

// refusal is why a request was not admitted; a 405's has the methods
// the route serves, for its Allow header.
type refusal struct {
	status int
	msg    string
	allow  string
}

// notServed is the error of a 405: the method, and those the route
// serves.
func notServed(method, allow string) string {
	return "method " + method + " is not served here: this route serves " + allow
}

// notFound is the error of a 404 for a path no route serves.
func notFound(path string) string {
	return "nothing is served at " + path + ": docs/http-api.md lists the routes"
}

// admit checks a request before it is routed: the Host of a loopback
// server, the Origin and token of a state change, the token of any
// request to a server beyond loopback.
func (s *Server) admit(r *http.Request) *refusal {
	if s.cfg.Loopback && !loopbackHost(r.Host) {
		return &refusal{status: http.StatusMisdirectedRequest, msg: "host " + r.Host + " is not this server's: a loopback server answers only to localhost, 127.0.0.1 or [::1]"}
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if s.cfg.Loopback || loginPaths[r.URL.Path] || s.bearer(r) || s.cookie(r) {
			return nil
		}
		return &refusal{status: http.StatusUnauthorized, msg: "token required: send Authorization: Bearer TOKEN, or open the login link cairn serve printed"}
	}
	if r.Method != http.MethodPost {
		allow := s.allowed(r)
		if allow == "" {
			return &refusal{status: http.StatusNotFound, msg: notFound(r.URL.EscapedPath())}
		}
		return &refusal{status: http.StatusMethodNotAllowed, msg: notServed(r.Method, allow), allow: allow}
	}
	if !sameOrigin(r) {
		return &refusal{status: http.StatusForbidden, msg: "cross-origin request refused: Origin " + r.Header.Get("Origin") + " is not this server"}
	}
	if s.cfg.ReadOnly {
		return &refusal{status: http.StatusForbidden, msg: "this server is read-only (cairn serve --read-only): it changes nothing"}
	}
	if !s.bearer(r) {
		return &refusal{status: http.StatusUnauthorized, msg: "a state change needs the token: send Authorization: Bearer TOKEN (cairn serve printed it)"}
	}
	return nil
}

// bearer reports whether r carries the token in its Authorization header.
func (s *Server) bearer(r *http.Request) bool {
	t, ok := httpauth.Bearer(r)
	return ok && s.tokenIs(t)
}

// loginPaths are what a browser that has only the login link may read:
// the login page and its script, which hold nothing secret. The script
// is among them so that the login works even where the browser has not
// sent the cookie yet.
var loginPaths = map[string]bool{"/login": true, "/assets/login.js": true}

// cookie reports whether r carries the login cookie. Its value is the
// server's read secret, never the token: a service on another port of
// the host, to which the browser sends the cookie too, learns nothing it
// could change anything with.
func (s *Server) cookie(r *http.Request) bool {
	c, err := r.Cookie(cookieName(r))
	return err == nil && s.readSecret != "" &&
		subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.readSecret)) == 1
}

func (s *Server) tokenIs(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.cfg.Token)) == 1
}

// sameOrigin reports whether r's Origin, when it has one, is the host r
// was sent to. Browsers send Origin with every POST.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host
}

// loopbackHost reports whether a Host header names a loopback address.
func loopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a listen address is on loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return loopbackHost(host)
}

// onceNonce is a value that can be used once.
type onceNonce struct {
	mu    sync.Mutex
	value string
	used  bool
}

func newOnceNonce() *onceNonce { return &onceNonce{value: randomHex(16)} }

func (n *onceNonce) use(v string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.used || subtle.ConstantTimeCompare([]byte(v), []byte(n.value)) != 1 {
		return false
	}
	n.used = true
	return true
}

// handleLogin trades the one-time login value for the read cookie and
// answers with loginPage, which hands the token to the tab and goes on to
// the web view. It does not redirect: a link clicked on another site
// starts a cross-site redirect chain, on which the browser keeps the
// SameSite=Strict cookie back, and the token would sit in the URL of an
// error. The page's own navigation is same-site, so the cookie goes with
// it, and the token never is in a URL. Only a GET uses the link up: a
// HEAD (curl -I, a link previewer) gets 405.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, "the login link is opened with GET; a "+r.Method+" does not use it up")
		return
	}
	if !s.login.use(r.URL.Query().Get("once")) {
		writeError(w, http.StatusForbidden, "this login link was used already or is wrong; restart cairn serve for a new one, or send the token as Authorization: Bearer")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: s.readSecret, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	loginPage.Execute(w, s.cfg.Token)
}

// loginPage carries the token in its markup, for assets/login.js to keep
// in the tab's session storage before it replaces the page with the web
// view. The script is an asset: the page's policy allows no inline one.
var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="cairn-token" content="{{.}}">
<title>cairn</title>
<script src="/assets/login.js" defer></script>
</head>
<body><p>Opening the web view…</p></body>
</html>
`))

// securityHeaders keep the page's scripts its own and out of frames.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}
