package netguard

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// echoToken is a secret with upper-case letters: net/http changes the
// case of a header's name, and so of a secret echoed in one.
const echoToken = "Tok9F3cE1dSecret"

// echoingServer echoes the Authorization header's token in its response
// headers: in a redirect's Location, in a Link, in a header's name.
func echoingServer(t *testing.T) *server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header()["X-"+tok] = []string{"1"}
		w.Header().Set("Link", "<http://elsewhere.test/k/"+url.PathEscape(tok)+">; rel=next")
		w.Header().Set("Set-Cookie", "session=abc")
		if r.URL.Path == "/start" {
			w.Header().Set("Location", "/landing?v="+tok+"&w="+url.QueryEscape(tok))
			w.WriteHeader(http.StatusFound)
		}
	})
}

// holdsToken reports whether h holds the secret, in any case.
func holdsToken(h map[string][]string) bool {
	for k, vs := range h {
		for _, s := range append([]string{k}, vs...) {
			if strings.Contains(strings.ToLower(s), strings.ToLower(echoToken)) {
				return true
			}
		}
	}
	return false
}

// Regression: Redact looked at header values only, so a secret a server
// echoed in a response header's name was journaled in clear. A name is
// redacted too, in any case (net/http had made "X-Tok9F3c…" into
// "X-Tok9f3c…").
func TestRedactSecretInHeaderName(t *testing.T) {
	secrets := []string{"Bearer " + echoToken, echoToken}
	for _, name := range []string{"X-" + echoToken, http.CanonicalHeaderKey("X-" + echoToken), "X-" + strings.ToLower(echoToken),
		"X-" + url.QueryEscape(echoToken) + "-Y"} {
		got := Redact(map[string][]string{name: {"1"}}, secrets...)
		if holdsToken(got) || len(got) != 1 {
			t.Errorf("%s recorded as %v", name, got)
		}
	}
	// As net/http gives a real response's headers.
	s := echoingServer(t)
	req, err := http.NewRequest("GET", s.URL+"/start", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+echoToken)
	resp, err := s.Client().Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !holdsToken(resp.Header) {
		t.Fatalf("the server echoed nothing: %v", resp.Header)
	}
	if got := Redact(resp.Header, secrets...); holdsToken(got) {
		t.Errorf("recorded headers hold the secret: %v", got)
	}
}
