package web

import (
	"crypto/subtle"
	"github.com/cairnrun/cairn/internal/httpauth"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// cookieName is the cookie the login link sets; it authorizes reads only.
const cookieName = "cairn_token"

// refusal is why a request was not admitted.
type refusal struct {
	status int
	msg    string
}

// admit checks a request before it is routed: the Host of a loopback
// server, the Origin and token of a state change, the token of any
// request to a server beyond loopback.
func (s *Server) admit(r *http.Request) *refusal {
	if s.cfg.Loopback && !loopbackHost(r.Host) {
		return &refusal{http.StatusMisdirectedRequest, "host " + r.Host + " is not this server's: a loopback server answers only to localhost, 127.0.0.1 or [::1]"}
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if s.cfg.Loopback || r.URL.Path == "/login" || s.bearer(r) || s.cookie(r) {
			return nil
		}
		return &refusal{http.StatusUnauthorized, "token required: send Authorization: Bearer TOKEN, or open the login link cairn serve printed"}
	}
	if r.Method != http.MethodPost {
		return &refusal{http.StatusMethodNotAllowed, "method " + r.Method + " is not served"}
	}
	if !sameOrigin(r) {
		return &refusal{http.StatusForbidden, "cross-origin request refused: Origin " + r.Header.Get("Origin") + " is not this server"}
	}
	if s.cfg.ReadOnly {
		return &refusal{http.StatusForbidden, "this server is read-only (cairn serve --read-only): it changes nothing"}
	}
	if !s.bearer(r) {
		return &refusal{http.StatusUnauthorized, "a state change needs the token: send Authorization: Bearer TOKEN (cairn serve printed it)"}
	}
	return nil
}

// bearer reports whether r carries the token in its Authorization header.
func (s *Server) bearer(r *http.Request) bool {
	t, ok := httpauth.Bearer(r)
	return ok && s.tokenIs(t)
}

func (s *Server) cookie(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	return err == nil && s.tokenIs(c.Value)
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

// handleLogin trades the one-time login value for the token's cookie and
// sends the browser on to the web view, the token in the URL's fragment
// (which no request carries) for the page to send on state changes.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !s.login.use(r.URL.Query().Get("once")) {
		writeError(w, http.StatusForbidden, "this login link was used already or is wrong; restart cairn serve for a new one, or send the token as Authorization: Bearer")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.cfg.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/#token="+s.cfg.Token, http.StatusSeeOther)
}

// securityHeaders keep the page's scripts its own and out of frames.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}
