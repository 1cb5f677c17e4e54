package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
)

// Regression: an IPv6 address with a zone (fe80::1%eth0, ::1%lo) was not
// Special, as no netip.Prefix contains a zoned address: a name that
// resolved to one, and the address the dialer's Control hook was given,
// passed as public. A zoned address is judged without its zone.
func TestZonedAddressIsSpecial(t *testing.T) {
	for _, s := range []string{"fe80::1%eth0", "::1%lo", "fd00:ec2::254%eth0", "ff02::1%eth0", "fc00::1%1"} {
		a := netip.MustParseAddr(s)
		if !Special(a) {
			t.Errorf("Special(%s) = false", s)
		}
		if addrAllowed([]entry{{ports: []int{80, 443}}}, a) {
			t.Errorf("%s allowed by \"*\"", s)
		}
	}
	if Special(netip.MustParseAddr("2606:4700::1111%eth0")) {
		t.Error("a public address with a zone is special")
	}

	// A name that resolves to a zoned loopback address, over real HTTP:
	// refused before any connection, and the server sees nothing.
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	dns := fakeDNS{"zoned.test": {netip.MustParseAddr("::1%lo")}}
	c := guard(t, Rules{Allow: []string{"*:" + port}, Resolver: dns})
	resp, err := c.RoundTrip(context.Background(), get("http://zoned.test:"+port+"/"))
	if !errors.Is(err, ErrRefused) || hits.Load() != 0 {
		t.Fatalf("a name resolving to ::1%%lo: %+v, %v; the server saw %d requests", resp, err, hits.Load())
	}
}
