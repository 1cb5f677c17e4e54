package host

import (
	"context"
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

// Regression: a call stopped by its own time limit (limits: {timeout})
// while its request waited for a response was journaled as "no response
// within 30s (net: {timeout})", the grant's timeout, which had not fired.
// The failed exchange names the call's time limit.
func TestNetCallTimeLimitJournaledAsTheCallsLimit(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer s.Close()
	defer close(release)
	g, err := netguard.New(netguard.Rules{Allow: []string{strings.TrimPrefix(s.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	j := &netJournal{inner: g.Call(), write: func(...checkpoint.Record) error { return nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := j.RoundTrip(ctx, &sandbox.NetRequest{Method: "GET", URL: s.URL + "/stall"}); err == nil {
		t.Fatal("no error")
	}
	ex := j.done[0]
	if ex.Step != conversation.ExchangeFailed || !strings.Contains(ex.Error, "the call's time limit") || strings.Contains(ex.Error, "net: {timeout}") {
		t.Fatalf("journaled %s: %s", ex.Step, ex.Error)
	}
}
