package netguard

import (
	"net/netip"
	"testing"
)

// Regression: the special addresses left out three ranges of IANA's
// IPv6 special-purpose registry that are not the public internet: the
// IPv4-translated ::ffff:0:0:0/96 (an IPv4 address in disguise, as
// ::ffff:0:10.0.0.1), segment routing's 5f00::/16 and the dummy prefix
// 100:0:0:1::/64; a request reached them unless named.
func TestSpecialIANARanges(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		special bool
	}{
		{"::ffff:0:10.0.0.1", true}, {"::ffff:0:127.0.0.1", true}, {"::ffff:0:8.8.8.8", true},
		{"5f00::1", true}, {"5f00:ffff::1", true}, {"100::1", true}, {"100:0:0:1::1", true},
		{"5eff::1", false}, {"5f01::1", false}, {"100:0:0:2::1", false}, {"::fffe:0:a00:1", false},
	} {
		if got := Special(netip.MustParseAddr(tc.addr)); got != tc.special {
			t.Errorf("Special(%s) = %v, want %v", tc.addr, got, tc.special)
		}
	}
}
