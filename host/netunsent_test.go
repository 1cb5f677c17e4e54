package host

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/view"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// noSuchHost is a resolver that knows no name.
type noSuchHost struct{}

func (noSuchHost) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// unsentPosts journals, over real loopback HTTP, a call that POSTs to a
// port where nothing listens and to a name that does not resolve, and is
// then killed while a GET of it waits for its response: the records of
// its interrupted round, and its journal.
func unsentPosts(t *testing.T) ([]checkpoint.Record, *netJournal) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	s := newNetServer(t)
	g, err := netguard.New(netguard.Rules{Allow: []string{closed, "nonexistent.test", s.hostPort()}, Methods: []string{"GET", "POST"}, Resolver: noSuchHost{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	var recs []checkpoint.Record
	j := &netJournal{inner: g.Call(), round: 1, call: conversation.ToolCall{ID: "c1", Name: "http"},
		write: func(r ...checkpoint.Record) error { recs = append(recs, r...); return nil }}
	for _, u := range []string{"http://" + closed + "/order", "http://nonexistent.test/order"} {
		if _, err := j.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: u, Body: []byte("an order")}); err == nil {
			t.Fatalf("POST %s: no error", u)
		}
	}
	recs = append(recs, j.record(conversation.Exchange{Seq: 3, Step: conversation.ExchangeRequesting, Method: "GET", URL: s.URL + "/slow"}))
	return recs, j
}

// Regression: a POST that never reached a peer (its connection refused,
// its host's name not resolving) was journaled as failed, which reads as
// sent: `cairn show` listed it as "sent, no response", and a seal after a
// kill -9 of a later request of the same call said the POST "was sent and
// may have taken effect there". It is journaled as not sent: shown so,
// sealed with the advice to retry, and no byte of it counted.
func TestNetUnsentRequestIsNotJournaledAsSent(t *testing.T) {
	recs, j := unsentPosts(t)
	for _, e := range j.done {
		if e.Sent() || !strings.Contains(view.ExchangeLine(e), "not sent") || strings.Contains(view.ExchangeLine(e), "sent, no response") {
			t.Errorf("journaled as %s: %s", e.Step, view.ExchangeLine(e))
		}
	}
	if u := (conversation.Usage{}).AddNet(j.done); u.NetRequests != 0 || u.NetSentBytes != 0 {
		t.Errorf("usage counts %d requests, %d bytes sent", u.NetRequests, u.NetSentBytes)
	}
	if u := netUsage(j.done); u.Requests != 0 || u.SentBytes != 0 {
		t.Errorf("the call's net usage: %+v", u)
	}
	for _, line := range (&Inspection{Tail: recs}).InterruptedExchanges() {
		if strings.Contains(line, "/order") && !strings.Contains(line, "not sent") {
			t.Errorf("cairn show lists %s", line)
		}
	}
	var list []SealedExchange
	for _, r := range recs {
		list = addExchange(list, *r.Exchange)
	}
	seal := (&run{tools: &toolset{tools: map[string]*tool{}}}).seal(j.call, checkpoint.PhaseExecuting, list)
	if seal.Effects != EffectsNone || !strings.HasPrefix(seal.Recommendation, "retry") || strings.Contains(seal.Recommendation, "/order") {
		t.Errorf("seal %+v: %s", seal, seal.message())
	}
	for _, e := range seal.Net[:2] {
		if e.Sent || !strings.Contains(e.State(), "not sent") {
			t.Errorf("the seal says request %d: %s", e.Seq, e.State())
		}
	}
}

// Regression: `cairn resume --strategy replay` would not replay a round
// whose call POSTed to a port where nothing listens, as if the POST had
// been sent.
func TestNetUnsentRequestDoesNotStopReplay(t *testing.T) {
	recs, _ := unsentPosts(t)
	if sentMutating(recs) {
		t.Error("replay refuses the round for a POST that was not sent")
	}
}
