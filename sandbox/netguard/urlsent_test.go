package netguard

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Regression: the bound on a URL was checked on the URL as the tool gave
// it, before the bytes a URL may not hold as they are were
// percent-encoded, so that a URL within it went on the wire as a request
// line up to three times as long (each byte past ASCII as %XX). The
// bound holds for the URL as it is sent.
func TestURLBoundHoldsForTheURLAsSent(t *testing.T) {
	addr, lines := requestLineServer(t)
	g, err := New(Rules{Allow: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	base := "http://" + addr
	fill := func(prefix, unit string) string {
		// As many units as fit in MaxURLBytes as the tool gives it.
		return prefix + strings.Repeat(unit, (MaxURLBytes-len(base)-len(prefix))/len(unit))
	}
	for name, target := range map[string]string{
		"query past ASCII": fill("/p?q=", "\xc3\xa9"),
		"query of spaces":  fill("/p?q=", " "),
		"path past ASCII":  fill("/", "\xc3\xa9"),
		"path of quotes":   fill("/", `"`),
	} {
		u := base + target
		if len(u) > MaxURLBytes {
			t.Fatalf("%s: a URL of %d bytes given", name, len(u))
		}
		n := len(lines())
		resp, err := g.Call().RoundTrip(context.Background(), get(u))
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "as sent") {
			t.Errorf("%s: a URL of %d bytes, about %d sent: %+v, %v", name, len(u), 3*len(u), resp, err)
		}
		if got := lines(); len(got) != n {
			t.Errorf("%s: a request line of %d bytes went on the wire", name, len(got[n]))
		}
	}
	// A URL whose sent form is within the bound goes, to its last byte.
	exact := fill("/p?q=", "%C3%A9")
	exact += strings.Repeat("a", MaxURLBytes-len(base)-len(exact))
	if resp, err := g.Call().RoundTrip(context.Background(), get(base+exact)); err != nil || string(resp.Body) != "ok" {
		t.Fatalf("a URL of %d bytes, sent as it is: %+v, %v", len(base+exact), resp, err)
	}
}
