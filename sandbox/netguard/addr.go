package netguard

import "net/netip"

// special are the address ranges a request reaches only when an allow
// entry names the address itself: the host's own, private networks, and
// whatever is not the public internet.
var special = prefixes(
	"0.0.0.0/8",       // "this network", unspecified
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // carrier-grade NAT
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, cloud metadata (169.254.169.254)
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // 6to4 relay
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, broadcast
	"::/96",           // unspecified, and IPv4-compatible (deprecated: ::127.0.0.1)
	"::1/128",         // loopback
	"::ffff:0:0/96",   // IPv4-mapped (unmapped before the check; kept for safety)
	"::ffff:0:0:0/96", // IPv4-translated (RFC 2765): an IPv4 address in disguise
	"64:ff9b::/96",    // NAT64: an IPv4 address in disguise
	"64:ff9b:1::/48",  // local NAT64
	"100::/64",        // discard-only
	"100:0:0:1::/64",  // dummy prefix (RFC 9780)
	"2001::/23",       // IETF protocol assignments (Teredo, ORCHID...)
	"2001:db8::/32",   // documentation
	"2002::/16",       // 6to4: an IPv4 address in disguise
	"3fff::/20",       // documentation (RFC 9637)
	"5f00::/16",       // segment routing SIDs (RFC 9602)
	"fc00::/7",        // unique local (fd00:ec2::254, cloud metadata)
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Special reports whether a is an address a request reaches only when an
// allow entry names it: loopback, private, link-local, multicast,
// unspecified, CGNAT, cloud metadata, documentation, reserved, segment
// routing, and IPv6 forms that carry an IPv4 address (NAT64, 6to4,
// IPv4-translated). An IPv4-mapped IPv6
// address is judged as its IPv4 address, and an address with a zone
// (fe80::1%eth0) as the address without it: no prefix contains a zoned
// address.
func Special(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return true
	}
	for _, p := range special {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
