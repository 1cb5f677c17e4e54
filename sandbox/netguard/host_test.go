package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestNormalHost(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		addr     bool
		bad      bool
	}{
		{in: "API.Example.com.", want: "api.example.com"},
		{in: "127.0.0.1", want: "127.0.0.1", addr: true},
		{in: "2130706433", want: "127.0.0.1", addr: true},
		{in: "0x7f000001", want: "127.0.0.1", addr: true},
		{in: "0177.0.0.1", want: "127.0.0.1", addr: true},
		{in: "0x7f.0.0.1", want: "127.0.0.1", addr: true},
		{in: "127.1", want: "127.0.0.1", addr: true},
		{in: "10.1", want: "10.0.0.1", addr: true},
		{in: "169.254.43518", want: "169.254.169.254", addr: true},
		{in: "[::1]", want: "::1", addr: true},
		{in: "::ffff:127.0.0.1", want: "127.0.0.1", addr: true},
		{in: "[::ffff:a9fe:a9fe]", want: "169.254.169.254", addr: true},
		{in: "FD00:EC2::254", want: "fd00:ec2::254", addr: true},
		{in: "fe80::1%eth0", bad: true},
		{in: "", bad: true},
		{in: "exa mple.com", bad: true},
		{in: "bücher.de", bad: true},
		{in: "xn--bcher-kva.de", want: "xn--bcher-kva.de"},
		{in: "1.2.3.4.5", bad: true},
		{in: "256.1.1.1", bad: true},
		{in: "08.0.0.1", bad: true},
		{in: "a..b", bad: true},
	} {
		got, addr, err := NormalHost(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrBadHost) {
				t.Errorf("NormalHost(%q) = %q, %v; want ErrBadHost", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want || addr != tc.addr {
			t.Errorf("NormalHost(%q) = %q, %v, %v; want %q, %v", tc.in, got, addr, err, tc.want, tc.addr)
		}
	}
}

func TestSpecial(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		special bool
	}{
		{"127.0.0.1", true}, {"10.2.3.4", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"100.64.0.1", true}, {"0.0.0.0", true}, {"224.0.0.1", true},
		{"255.255.255.255", true}, {"::1", true}, {"::", true}, {"fd00:ec2::254", true}, {"fe80::1", true},
		{"ff02::1", true}, {"::ffff:10.0.0.1", true}, {"64:ff9b::a00:1", true}, {"2002:a00:1::", true}, {"::127.0.0.1", true},
		{"8.8.8.8", false}, {"93.184.216.34", false}, {"2606:4700::1111", false}, {"::ffff:8.8.8.8", false},
	} {
		if got := Special(netip.MustParseAddr(tc.addr)); got != tc.special {
			t.Errorf("Special(%s) = %v, want %v", tc.addr, got, tc.special)
		}
	}
}

func TestEntries(t *testing.T) {
	for _, tc := range []struct {
		entry, host string
		port        int
		match       bool
	}{
		{"api.example.com", "api.example.com", 443, true},
		{"api.example.com", "api.example.com", 80, true},
		{"api.example.com", "api.example.com", 8443, false},
		{"api.example.com", "x.api.example.com", 443, false},
		{"*.example.org:443", "a.b.example.org", 443, true},
		{"*.example.org:443", "example.org", 443, false},
		{"*.example.org:443", "a.example.org", 80, false},
		{"*.example.org:443", "evilexample.org", 443, false},
		{"*", "anything.test", 443, true},
		{"*", "127.0.0.1", 443, false},
		{"127.0.0.1:8080", "127.0.0.1", 8080, true},
		{"[::1]:8080", "::1", 8080, true},
		{"2130706433:8080", "127.0.0.1", 8080, true},
	} {
		e, err := parseEntry(tc.entry)
		if err != nil {
			t.Fatalf("parseEntry(%q): %v", tc.entry, err)
		}
		if got := e.matches(tc.host, tc.port); got != tc.match {
			t.Errorf("%q matches %s:%d = %v, want %v", tc.entry, tc.host, tc.port, got, tc.match)
		}
	}
	for _, bad := range []string{"", "host:0", "host:99999", "host:x", "*.10.0.0.1", "bad host", "a:b:c"} {
		if _, err := parseEntry(bad); !errors.Is(err, ErrBadRule) {
			t.Errorf("parseEntry(%q) = %v, want ErrBadRule", bad, err)
		}
	}
	// A URL given for a host is told so (it once read "has ':' (write an
	// international name in its xn-- form)").
	if _, err := parseEntry("http://127.0.0.1:18080/"); !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), "not a URL") {
		t.Errorf("a URL as an entry: %v", err)
	}
}

func FuzzNormalHost(f *testing.F) {
	for _, s := range []string{"example.com", "127.1", "0x7f.1", "[::ffff:1.2.3.4]", "2130706433", "*.a.b:443", "fe80::1%x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, isAddr, err := NormalHost(s)
		if err != nil {
			return
		}
		again, isAddr2, err := NormalHost(h)
		if err != nil || again != h || isAddr2 != isAddr {
			t.Fatalf("NormalHost(%q) = %q, not stable: %q, %v", s, h, again, err)
		}
		if a, err := netip.ParseAddr(h); (err == nil) != isAddr || isAddr && a.Is4In6() {
			t.Fatalf("NormalHost(%q) = %q, addr %v", s, h, isAddr)
		}
		parseEntry(s)
	})
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		allow []string
		need  string
		want  bool
	}{
		{[]string{"api.example.com"}, "api.example.com", true},
		{[]string{"api.example.com:8443"}, "api.example.com", true},
		{[]string{"api.example.com:8443"}, "api.example.com:443", false},
		{[]string{"*.example.com"}, "a.example.com", true},
		{[]string{"*.example.com"}, "*.a.example.com", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"*"}, "*.anything.org", true},
		{[]string{"*"}, "127.0.0.1", false},
		{[]string{"*"}, "localhost", false},
		{[]string{"*:8080"}, "localhost:8080", false},
		{[]string{"localhost"}, "localhost:443", true},
		{[]string{"127.0.0.1:9"}, "127.0.0.1", true},
		{[]string{"a.example.com"}, "*.example.com", false},
		{nil, "api.example.com", false},
	} {
		if got := Covers(tc.allow, tc.need); got != tc.want {
			t.Errorf("Covers(%v, %q) = %v, want %v", tc.allow, tc.need, got, tc.want)
		}
	}
}
