package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: a secret was set on a plain http request as on an https
// one, so a tool could send it in clear text, to port 80 or to any port
// its host's entry allows over http, where whoever answers for the name
// (a DNS answer the attacker controls, anyone on the way) reads it: TLS,
// which would refuse that peer, was not asked for. A request that would
// carry a secret over http is refused before anything is sent, saying to
// use https; to a loopback or private address an allow entry names, or
// to localhost, whose traffic does not cross the internet, it is sent
// with its secret as before.
func TestSecretNotSentInClearText(t *testing.T) {
	c := guard(t, Rules{Allow: []string{"api.example.com", "api.example.com:8080", "*.example.org"},
		Secrets: []Secret{{Host: "api.example.com", Header: "Authorization", Value: "Bearer tok"},
			{Host: "api.example.com:8080", Header: "X-Key", Value: "k2"}, {Host: "*.example.org", Header: "X-Key", Value: "k3"}},
		Resolver: fakeDNS{"api.example.com": {netip.MustParseAddr("203.0.113.80")}}})
	for _, u := range []string{"http://api.example.com/", "http://api.example.com:443/", "http://API.example.com./x",
		"http://api.example.com:8080/", "http://a.example.org/"} {
		err := c.Admit(&sandbox.NetRequest{Method: "GET", URL: u})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "https") || !strings.Contains(err.Error(), "clear text") {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"https://api.example.com/", "https://api.example.com:80/", "https://a.example.org/", "http://b.example.org.evil/"} {
		err := c.Admit(&sandbox.NetRequest{Method: "GET", URL: u})
		if err != nil && strings.Contains(err.Error(), "clear text") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if c.Requests() != 3 {
		t.Errorf("%d requests admitted, want the 3 over https", c.Requests())
	}

	// Over loopback the secret is sent over http, named by address or
	// as localhost.
	s := newServer(t, hello)
	local := "localhost:" + s.port()
	c = guard(t, Rules{Allow: []string{s.hostPort(), local},
		Secrets:  []Secret{{Host: s.hostPort(), Header: "X-Key", Value: "k1"}, {Host: local, Header: "X-Key", Value: "k2"}},
		Resolver: fakeDNS{"localhost": {netip.MustParseAddr("127.0.0.1")}}})
	for u, want := range map[string]string{s.URL: "k1", "http://" + local: "k2"} {
		if _, err := c.RoundTrip(context.Background(), get(u)); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if got := s.header.Load().(http.Header).Get("X-Key"); got != want {
			t.Errorf("%s: the server saw X-Key %q, want %q", u, got, want)
		}
	}
}

// Regression: a secret for a shared address (100.64.0.0/10: carrier-grade
// NAT, and the addresses a tailnet such as Tailscale gives its nodes, where
// a private model server commonly listens) was refused over http, though
// one for a private or link-local address an allow entry names was sent.
// Shared addresses are private to the network that uses them: the secret
// goes over http to them too, and to no address beside the range.
func TestSecretSentInClearTextToSharedAddress(t *testing.T) {
	shared := []string{"100.64.0.1", "100.101.102.103:11434", "100.127.255.254:8080"}
	public := []string{"100.63.255.255", "100.128.0.1:8080"}
	var allow []string
	var secrets []Secret
	for _, h := range append(append([]string{}, shared...), public...) {
		allow = append(allow, h)
		secrets = append(secrets, Secret{Host: h, Header: "Authorization", Value: "Bearer tok"})
	}
	c := guard(t, Rules{Allow: allow, Secrets: secrets})
	for _, h := range shared {
		if err := c.Admit(&sandbox.NetRequest{Method: "GET", URL: "http://" + h + "/v1/models"}); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	for _, h := range public {
		err := c.Admit(&sandbox.NetRequest{Method: "GET", URL: "http://" + h + "/v1/models"})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "clear text") {
			t.Errorf("%s: %v", h, err)
		}
	}
}
