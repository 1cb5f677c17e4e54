package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// BenchmarkNetExchange is what journaling costs one exchange with a
// loopback server: sent directly by the guard, and through the call's
// journal on a file store (a requesting record synced, the body kept as a
// blob, the received record synced).
func BenchmarkNetExchange(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "pong") }))
	defer srv.Close()
	guard, err := netguard.New(netguard.Rules{Allow: []string{strings.TrimPrefix(srv.URL, "http://")}, MaxRequests: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer guard.Close()
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		c := guard.Call()
		for b.Loop() {
			if _, err := c.RoundTrip(ctx, &sandbox.NetRequest{Method: "GET", URL: srv.URL}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("journaled", func(b *testing.B) {
		store, err := OpenStore(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		lock, err := store.Lock("bench", checkpoint.ThisProcess("bench"))
		if err != nil {
			b.Fatal(err)
		}
		defer lock.Unlock()
		log, err := store.Create("bench", checkpoint.NewState("bench", checkpoint.Definition{}, checkpoint.Labels{}, time.Now()))
		if err != nil {
			b.Fatal(err)
		}
		defer log.Close()
		g := newRoundSync(log)
		j := &netJournal{inner: guard.Call(), write: g.write, blobs: store.PutBlob, round: 1, call: conversation.ToolCall{ID: "c", Name: "t"}}
		for b.Loop() {
			if _, err := j.RoundTrip(ctx, &sandbox.NetRequest{Method: "GET", URL: srv.URL}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		// One record appended and synced, for comparison: an exchange
		// costs two of these and the request.
		start := time.Now()
		const n = 200
		for range n {
			if err := g.write(j.record(conversation.Exchange{Seq: 1, Step: conversation.ExchangeRequesting})); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/n, "ns/sync")
	})
}
