package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzAdmit sends requests with any Host, Origin, Authorization and
// method through the admission check of a loopback server and of one
// beyond loopback: a state change is admitted only with the token in its
// header and no foreign Origin, a read beyond loopback only with the
// token, and nothing on loopback under a foreign Host.
func FuzzAdmit(f *testing.F) {
	const token = "0123456789abcdef"
	f.Add("127.0.0.1:7878", "", "Bearer "+token, "POST", true)
	f.Add("localhost", "http://localhost", "Bearer "+token, "GET", false)
	f.Add("evil.example", "http://evil.example", "Bearer x", "POST", true)
	f.Add("[::1]:1", "null", "", "PUT", false)
	f.Fuzz(func(t *testing.T, host, origin, auth, method string, loopback bool) {
		s := &Server{cfg: Config{Token: token, Loopback: loopback}, login: newOnceNonce(), mux: http.NewServeMux()}
		s.routes() // a 405 names the methods of the route
		r := httptest.NewRequest(http.MethodGet, "/api/agents", nil)
		r.Method, r.Host = method, host
		r.Header.Set("Origin", origin)
		r.Header.Set("Authorization", auth)
		if s.admit(r) != nil {
			return
		}
		if loopback && !loopbackHost(host) {
			t.Fatalf("admitted Host %q on loopback", host)
		}
		switch method {
		case http.MethodGet, http.MethodHead:
			if !loopback && auth != "Bearer "+token {
				t.Fatalf("admitted a read beyond loopback with %q", auth)
			}
		case http.MethodPost:
			if auth != "Bearer "+token || (origin != "" && !strings.HasSuffix(origin, "://"+host)) {
				t.Fatalf("admitted a POST with %q from %q to %q", auth, origin, host)
			}
		default:
			t.Fatalf("admitted method %q", method)
		}
	})
}
