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

// Regression: a seal judged a sent request by its method alone, so a GET
// whose X-HTTP-Method-Override header asked the server to take it as a
// DELETE (as many servers do) was sealed with the advice to retry, and
// `cairn resume --strategy replay` dropped its round and sent it again.
// A request is judged by the stricter of its method and its override.
func TestNetMethodOverrideIsJudgedBySeal(t *testing.T) {
	s := newNetServer(t)
	g, err := netguard.New(netguard.Rules{Allow: []string{s.hostPort()}, Methods: []string{"GET", "POST", "DELETE"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	for _, tc := range []struct {
		method, header, override string
		mutating                 bool
	}{
		{"GET", "X-HTTP-Method-Override", "DELETE", true},
		{"GET", "x-http-method", "post", true},
		{"GET", "X-Method-Override", "GET", false},
		{"POST", "X-HTTP-Method-Override", "GET", true},
		{"GET", "", "", false},
	} {
		t.Run(tc.method+" "+tc.header+" "+tc.override, func(t *testing.T) {
			var recs []checkpoint.Record
			j := &netJournal{inner: g.Call(), round: 1, call: conversation.ToolCall{ID: "c1", Name: "http"},
				write: func(r ...checkpoint.Record) error { recs = append(recs, r...); return nil }}
			req := &sandbox.NetRequest{Method: tc.method, URL: s.URL + "/item/7"}
			if tc.header != "" {
				req.Header = map[string][]string{tc.header: {tc.override}}
			}
			if _, err := j.RoundTrip(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			var list []SealedExchange
			for _, r := range recs {
				list = addExchange(list, *r.Exchange)
			}
			seal := (&run{tools: &toolset{tools: map[string]*tool{}}}).seal(j.call, checkpoint.PhaseExecuting, list)
			if got := seal.Effects == EffectsUnknown; got != tc.mutating {
				t.Errorf("seal %s: %s", seal.Effects, seal.Recommendation)
			}
			if tc.mutating && !strings.Contains(seal.Recommendation, "/item/7") {
				t.Errorf("the seal does not name the request: %s", seal.Recommendation)
			}
			if tc.mutating && tc.method == "GET" && !strings.Contains(seal.Recommendation, strings.ToUpper(tc.override)) {
				t.Errorf("the seal does not say the request asked to be taken as %s: %s", tc.override, seal.Recommendation)
			}
			if got := sentMutating(recs); got != tc.mutating {
				t.Errorf("replay holds back the round: %v", got)
			}
		})
	}
}

// Regression: a grant of GET alone let a tool send a GET that asked the
// server, by an override header, to take it as a DELETE.
func TestNetMethodOverrideIsGranted(t *testing.T) {
	s := newNetServer(t)
	g, err := netguard.New(netguard.Rules{Allow: []string{s.hostPort()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	c := g.Call()
	_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: s.URL + "/item/7",
		Header: map[string][]string{"X-Http-Method-Override": {"DELETE"}}})
	if err == nil || !strings.Contains(err.Error(), "DELETE") || !strings.Contains(err.Error(), "X-Http-Method-Override") {
		t.Fatalf("a GET taken as DELETE under a grant of GET: %v", err)
	}
	if s.all.Load() != 0 {
		t.Fatalf("the server saw %d requests", s.all.Load())
	}
	if _, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: s.URL + "/item/7",
		Header: map[string][]string{"X-Http-Method-Override": {"head"}}}); err != nil {
		t.Fatalf("a GET taken as HEAD under a grant of GET and HEAD: %v", err)
	}
}
