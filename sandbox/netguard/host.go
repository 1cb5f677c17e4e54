package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ErrBadHost is a host that is not a DNS name or an IP address cairn
// accepts: empty, non-ASCII, with a zone, or malformed.
var ErrBadHost = errors.New("not a host name or address")

// NormalHost is the canonical form of a URL's or an allow entry's host:
// a DNS name in lower case without a trailing dot, or an IP address as
// netip prints it. Every form an IPv4 address can take in a URL that a C
// resolver would read (decimal 2130706433, hex 0x7f000001, octal 0177.0.0.1,
// short forms 127.1) becomes the dotted address it means, and an
// IPv4-mapped IPv6 address becomes its IPv4 address, so that no spelling of
// an address escapes its checks. The second result says it is an address.
//
// # Errors
//
// ErrBadHost, saying why.
func NormalHost(h string) (string, bool, error) {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return "", false, fmt.Errorf("%w: empty", ErrBadHost)
	}
	if strings.Contains(h, "%") {
		return "", false, fmt.Errorf("%w: %q has a zone", ErrBadHost, h)
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String(), true, nil
	}
	if a, ok := parseIPv4Loose(h); ok {
		return a.String(), true, nil
	}
	if err := checkName(h); err != nil {
		return "", false, err
	}
	return h, false, nil
}

// checkName accepts a DNS name of ASCII letters, digits, '-' and '_' in
// dot-separated labels. A name that ends in a label of digits alone is
// refused: a resolver may read it as an address.
func checkName(h string) error {
	if len(h) > 253 {
		return fmt.Errorf("%w: a name of %d bytes", ErrBadHost, len(h))
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("%w: %q has an empty or over-long label", ErrBadHost, h)
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("%w: %q has %q (write an international name in its xn-- form)", ErrBadHost, h, c)
			}
		}
	}
	last := labels[len(labels)-1]
	if _, err := strconv.ParseUint(last, 0, 64); err == nil || strings.HasPrefix(last, "0x") {
		return fmt.Errorf("%w: %q looks like an address but is not one", ErrBadHost, h)
	}
	return nil
}

// parseIPv4Loose reads an IPv4 address as inet_aton does: one to four
// parts separated by dots, each decimal, octal (leading 0) or hex (0x),
// the last part filling the remaining bytes.
func parseIPv4Loose(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		v, err := strconv.ParseUint(p, 0, 32)
		if p == "" || err != nil {
			if len(p) > 1 && p[0] == '0' && p[1] != 'x' { // "08" is not octal: not an address
				return netip.Addr{}, false
			}
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var ip uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		ip |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}
