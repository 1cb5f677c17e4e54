package netguard

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// Regression: a name that resolves to a loopback or private address was
// refused saying to allow that address itself to reach it, which did not
// help: with the address allowed, the name was refused the same, as a
// name reaches public addresses only. The refusal says to send the
// request to the address, with an entry of it.
func TestNameToSpecialAddressRefusalSaysToUseTheAddress(t *testing.T) {
	s := newServer(t, hello)
	c := guard(t, Rules{Allow: []string{"intranet.test:" + s.port(), s.hostPort()},
		Resolver: fakeDNS{"intranet.test": {netip.MustParseAddr("127.0.0.1")}}})
	_, err := c.RoundTrip(context.Background(), get("http://intranet.test:"+s.port()+"/"))
	if !errors.Is(err, ErrRefused) || strings.Contains(err.Error(), "allow that address itself to reach it") ||
		!strings.Contains(err.Error(), "a name reaches public addresses only") || !strings.Contains(err.Error(), "send the request to "+s.hostPort()) {
		t.Fatalf("intranet.test resolving to 127.0.0.1, which is allowed: %v", err)
	}
	if resp, err := c.RoundTrip(context.Background(), get(s.URL+"/")); err != nil || string(resp.Body) != "hello " {
		t.Fatalf("as the refusal said, to %s: %+v, %v", s.URL, resp, err)
	}
}
