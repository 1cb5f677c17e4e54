package netguard

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

// Regression: the addresses a name resolved to were unmapped in the
// resolver's own slice (::ffff:127.0.0.1 made 127.0.0.1 there), which a
// resolver that caches its answers shares with every caller, another
// guard's dial among them, as it reads it. The answer is left as it came.
func TestResolversAnswerIsLeftAsItCame(t *testing.T) {
	mapped := netip.MustParseAddr("::ffff:127.0.0.1")
	dns := fakeDNS{"cache.example": {mapped}}
	g, err := New(Rules{Allow: []string{"*"}, Resolver: dns})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = g.Call().RoundTrip(context.Background(), get("http://cache.example/"))
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("%v, want it refused: the name resolves to loopback", err)
	}
	if a := dns["cache.example"][0]; a != mapped {
		t.Fatalf("the resolver's answer is %s now, where it was %s", a, mapped)
	}
}
