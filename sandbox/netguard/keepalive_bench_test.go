package netguard

import (
	"context"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// BenchmarkSecretExchange is one GET that carries a secret to a loopback
// HTTP/1.1 server, over http and over https, each from a call of its own:
// what a tool that calls an API pays a request. no-secret is a GET
// without one, over http.
func BenchmarkSecretExchange(b *testing.B) {
	for _, tc := range []struct {
		name    string
		overTLS bool
		token   string
	}{{"http", false, "Bearer tok-9f3c1d2e"}, {"https", true, "Bearer tok-9f3c1d2e"}, {"no-secret", false, ""}} {
		b.Run(tc.name, func(b *testing.B) {
			s, conns := countedServer(b, tc.overTLS)
			g := secretGuard(b, s, tc.token)
			ctx := context.Background()
			for b.Loop() {
				if _, err := g.Call().RoundTrip(ctx, &sandbox.NetRequest{Method: "GET", URL: s.URL + "/"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(conns.Load())/float64(b.N), "conns/op")
		})
	}
}
