package netguard

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// Regression: the IPv6 documentation range 3fff::/20 (RFC 9637), beside
// 2001:db8::/32, was taken as public, so that a name resolving into it
// under * was dialled, where a documentation address is special and
// reached only through an entry that names it.
func TestIPv6DocumentationRange3fffIsSpecial(t *testing.T) {
	for _, a := range []string{"3fff::1", "3fff:fff:ffff::1"} {
		if !Special(netip.MustParseAddr(a)) {
			t.Errorf("Special(%s) = false", a)
		}
		c := guard(t, Rules{Allow: []string{"*"}, Resolver: fakeDNS{"doc.example": {netip.MustParseAddr(a)}}})
		_, err := c.RoundTrip(context.Background(), get("http://doc.example/"))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "resolves to "+a) {
			t.Errorf("doc.example resolving to %s: %v", a, err)
		}
	}
	if Special(netip.MustParseAddr("3fff:1000::1")) || Special(netip.MustParseAddr("3ffe:ffff::1")) {
		t.Error("an address beside 3fff::/20 is taken as special")
	}
}
