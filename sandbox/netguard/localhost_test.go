package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// Regression: a request to localhost, whose secret goes over plain http
// because its traffic does not cross the internet, went to whatever
// addresses the name resolved to, a public one too (a hosts file without
// localhost, a DNS search domain that answers for it): the secret went
// in clear text to that address. localhost reaches loopback addresses
// only; a name that resolves to any other is refused before anything is
// sent.
func TestLocalhostReachesLoopbackOnly(t *testing.T) {
	s := newServer(t, hello)
	local := "localhost:" + s.port()
	for _, public := range []string{"1.1.1.1", "2606:4700:4700::1111"} {
		c := guard(t, Rules{Allow: []string{local},
			Secrets:  []Secret{{Host: local, Header: "X-Key", Value: "k2"}},
			Resolver: fakeDNS{"localhost": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr(public)}}})
		before := s.hits.Load()
		_, err := c.RoundTrip(context.Background(), get("http://"+local+"/"))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "localhost resolves to "+public) {
			t.Errorf("localhost resolving to 127.0.0.1 and %s: %v", public, err)
		}
		if s.hits.Load() != before {
			t.Errorf("localhost resolving to 127.0.0.1 and %s: the request was sent, where its secret would have gone to %s in clear text had loopback not answered first", public, public)
		}
	}
	c := guard(t, Rules{Allow: []string{local}, Resolver: fakeDNS{"localhost": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}}})
	if resp, err := c.RoundTrip(context.Background(), get("http://"+local+"/")); err != nil || string(resp.Body) != "hello " {
		t.Fatalf("localhost resolving to loopback addresses: %+v, %v", resp, err)
	}
}

// Regression: a secret for localhost under an allow list that reaches
// localhost only by * was taken as one a request could carry, where *
// reaches public addresses only and every request to localhost was
// refused: the secret would never be sent. It is refused when the grant
// is read, as a secret for any host no entry reaches is.
func TestSecretForLocalhostUnderAnyNameIsABadRule(t *testing.T) {
	s := newServer(t, hello)
	local := "localhost:" + s.port()
	secret := []Secret{{Host: local, Header: "X-Key", Value: "k"}}
	bare := guard(t, Rules{Allow: []string{"*:" + s.port()}})
	if _, err := bare.RoundTrip(context.Background(), get("http://"+local+"/")); !errors.Is(err, ErrRefused) {
		t.Fatalf("a request to %s under *:%s: %v", local, s.port(), err)
	}
	if _, err := New(Rules{Allow: []string{"*:" + s.port()}, Secrets: secret}); !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), "never be sent") {
		t.Errorf("a secret for %s under *:%s: %v; want ErrBadRule saying it would never be sent", local, s.port(), err)
	}
	c := guard(t, Rules{Allow: []string{"*:" + s.port(), local}, Secrets: secret})
	if _, err := c.RoundTrip(context.Background(), get("http://"+local+"/")); err != nil || s.header.Load().(http.Header).Get("X-Key") != "k" {
		t.Fatalf("a secret for %s with an entry of its own: %v", local, err)
	}
}
