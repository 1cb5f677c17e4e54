package host

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// replayed is a call's replaying Net as verify gives it to the call: the
// journal's wrapper around a netReplay of recorded, asking the guard of a
// grant that allows allow.
func replayed(t *testing.T, recorded []conversation.Exchange, allow ...string) (*netJournal, *netReplay) {
	t.Helper()
	g, err := netguard.New(netguard.Rules{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	n := &netReplay{store: checkpoint.NewMemStore(), recorded: recorded}
	return replayNet(n)(conversation.ToolCall{ID: "call_1_0", Name: "http"}, g.Call()), n
}

// divergenceSaying fails unless one of divs says want.
func divergenceSaying(t *testing.T, divs []Divergence, want string) {
	t.Helper()
	for _, d := range divs {
		if strings.Contains(d.String(), want) {
			return
		}
	}
	t.Fatalf("divergences %v; want one saying %q", divs, want)
}

// Regression: a call that sent two or more requests past those recorded
// made the replay panic (slice bounds out of range), which the call
// reported as a trap of its module. It is a divergence of kind http
// saying the call sent more requests than were recorded.
func TestVerifyMoreRequestsThanRecordedDiverges(t *testing.T) {
	recorded := []conversation.Exchange{{Seq: 1, Step: conversation.ExchangeRefused, Method: "GET",
		URL: "http://a.test/x", Error: "not sent: no connection: connection refused"}}
	j, n := replayed(t, recorded, "a.test")
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("the replay panicked: %v", r)
		}
	}()
	for i := range 4 {
		if _, err := j.RoundTrip(context.Background(), getReq("http://a.test/x")); err == nil {
			t.Fatalf("request %d was answered", i+1)
		}
	}
	divs := n.finish()
	if len(divs) != 1 || divs[0].Kind != DivergeHTTP {
		t.Fatalf("divergences %v", divs)
	}
	divergenceSaying(t, divs, "request 2: the call sent more requests than were recorded: 3 past the 1 recorded")
}

// Regression: the replay compared a request's headers only when some were
// recorded, so a call that now sent a header where none was recorded
// matched. No headers and empty headers are the same; any other
// difference is a divergence.
func TestVerifyHeaderAddedToHeaderlessRequestDiverges(t *testing.T) {
	for _, tc := range []struct {
		name     string
		recorded map[string][]string
		sent     map[string][]string
		differs  bool
	}{
		{"none recorded, one sent", nil, map[string][]string{"X-Leak": {"2024-01-02"}}, true},
		{"one recorded, none sent", map[string][]string{"X-Leak": {"2024-01-02"}}, nil, true},
		{"empty sent for none recorded", nil, map[string][]string{}, false},
		{"the same", map[string][]string{"Accept": {"text/plain"}}, map[string][]string{"accept": {"text/plain"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorded := []conversation.Exchange{{Seq: 1, Step: conversation.ExchangeRefused, Method: "GET",
				URL: "http://a.test/x", RequestHeader: tc.recorded, RequestDigest: digestOf(nil), Error: "not sent: no connection"}}
			j, n := replayed(t, recorded, "a.test")
			j.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://a.test/x", Header: tc.sent})
			divs := n.finish()
			if tc.differs {
				divergenceSaying(t, divs, "request headers differ")
			} else if len(divs) != 0 {
				t.Fatalf("divergences %v", divs)
			}
		})
	}
}

// Regression: verify compared URLs as the journal's redaction decoded and
// encoded their query again, dropping the pairs with a ';' or a bad '%'
// escape: a call that now sent "card=4112" where "card=4111" was recorded
// matched. URLs are compared as sent, secrets aside.
func TestVerifySeesAChangedRawQuery(t *testing.T) {
	for _, tc := range []struct{ recorded, sent string }{
		{"http://a.test/q?a=1&exfil;card=4111", "http://a.test/q?a=1&exfil;card=4112"},
		{"http://a.test/q?a=1&x=%zz1", "http://a.test/q?a=1&x=%zz2"},
		{"http://a.test/q?a=1&b=2", "http://a.test/q?b=2&a=1"},
	} {
		// As the journal records it.
		recorded := []conversation.Exchange{{Seq: 1, Step: conversation.ExchangeRefused, Method: "GET",
			URL: netguard.RecordedURL(tc.recorded), RequestDigest: digestOf(nil), Error: "not sent: no connection"}}
		j, n := replayed(t, recorded, "a.test")
		j.RoundTrip(context.Background(), getReq(tc.sent))
		divergenceSaying(t, n.finish(), "request URL differs")
		j, n = replayed(t, recorded, "a.test")
		j.RoundTrip(context.Background(), getReq(tc.recorded))
		if divs := n.finish(); len(divs) != 0 {
			t.Fatalf("the recorded request %s: %v", tc.recorded, divs)
		}
	}
}

func getReq(url string) *sandbox.NetRequest { return &sandbox.NetRequest{Method: "GET", URL: url} }
