package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// netReplay is the Net of a call verify runs again: it sends nothing. It
// serves the call's recorded exchanges in order — the recorded response,
// its body from the store, or the recorded refusal or failure — and notes
// a divergence when the guest sends another request than the one
// recorded at that place, or more requests than were recorded.
type netReplay struct {
	store    checkpoint.Store
	recorded []conversation.Exchange
	mu       sync.Mutex
	next     int
	divs     []Divergence
}

var _ sandbox.Net = (*netReplay)(nil)

// errNotReplayed is what the guest is told for a request verify cannot
// answer from the recording.
var errNotReplayed = errors.New("cairn verify: this request is not the one recorded here, and verify sends nothing")

// Admit refuses, as recorded, a request the grant refused before
// anything was sent.
func (n *netReplay) Admit(req *sandbox.NetRequest) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ex := n.unjournaledRefusal(req); ex != nil {
		return errors.New(ex.Error)
	}
	if n.next >= len(n.recorded) || n.recorded[n.next].Step != conversation.ExchangeRefused {
		return nil
	}
	ex := n.take(req)
	if ex == nil {
		return errNotReplayed
	}
	return errors.New(ex.Error)
}

// unjournaledRefusal is, once the recording holds as many refusals as a
// call journals (maxJournaledRefusals), the last of them when req is the
// same request and not the one recorded next: the call was refused it
// again, past what its journal keeps, and nothing of it was recorded.
func (n *netReplay) unjournaledRefusal(req *sandbox.NetRequest) *conversation.Exchange {
	var last *conversation.Exchange
	refused := 0
	for i := range n.recorded[:n.next] {
		if n.recorded[i].Step == conversation.ExchangeRefused {
			refused, last = refused+1, &n.recorded[i]
		}
	}
	switch {
	case refused < maxJournaledRefusals || sameRequest(last, req) != "":
		return nil
	case n.next < len(n.recorded) && sameRequest(&n.recorded[n.next], req) == "":
		return nil // it is the next one recorded
	}
	return last
}

// RoundTrip serves the recorded answer of the request.
func (n *netReplay) RoundTrip(_ context.Context, req *sandbox.NetRequest) (*sandbox.NetResponse, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ex := n.take(req)
	switch {
	case ex == nil:
		return nil, errNotReplayed
	case ex.Step != conversation.ExchangeReceived:
		return nil, errors.New(ex.Error)
	case ex.Blob == "" && ex.ResponseSize > 0:
		n.diverge(ex.Seq, "", "its response body was not kept (past the size kept), so it cannot be served")
		return nil, errNotReplayed
	}
	var body []byte
	if ex.Blob != "" {
		var err error
		if body, err = n.store.Blob(ex.Blob); err != nil {
			n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: exchangeName(ex), Recorded: ex.Blob,
				Detail: "the recorded response body is " + missingOrChanged(err)})
			return nil, errNotReplayed
		}
	}
	return &sandbox.NetResponse{Status: ex.Status, Header: http.Header(ex.ResponseHeader), Body: body}, nil
}

// take is the recorded exchange at the request's place when the request
// is the one recorded there; else it notes the divergence and returns nil.
func (n *netReplay) take(req *sandbox.NetRequest) *conversation.Exchange {
	seq := n.next + 1
	if n.next >= len(n.recorded) {
		n.next++
		n.diverge(seq, fmt.Sprintf("%s %s", req.Method, netguard.RedactURL(req.URL)),
			fmt.Sprintf("the call sent request %d; %d were recorded", seq, len(n.recorded)))
		return nil
	}
	ex := &n.recorded[n.next]
	n.next++
	if why := sameRequest(ex, req); why != "" {
		n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: exchangeName(ex), Detail: "request " + why,
			Replayed: fmt.Sprintf("%s %s", req.Method, netguard.RedactURL(req.URL))})
		return nil
	}
	return ex
}

// sameRequest says how req differs from the recorded request, or "".
// Headers and URL are compared as the journal keeps them: redacted.
func sameRequest(ex *conversation.Exchange, req *sandbox.NetRequest) string {
	switch {
	case ex.Method != req.Method:
		return "method differs"
	case ex.URL != netguard.RedactURL(req.URL):
		return "URL differs"
	case ex.RequestDigest != "" && ex.RequestDigest != digestOf(req.Body):
		return "body differs"
	case ex.RequestHeader != nil && !reflect.DeepEqual(ex.RequestHeader, netguard.Redact(req.Header)):
		return "headers differ"
	}
	return ""
}

// finish notes the recorded requests the call did not send again.
func (n *netReplay) finish() []Divergence {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.next < len(n.recorded) {
		n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: exchangeName(&n.recorded[n.next]),
			Detail: fmt.Sprintf("the call sent %d requests; %d were recorded", n.next, len(n.recorded))})
	}
	return n.divs
}

func (n *netReplay) diverge(seq int, replayed, detail string) {
	n.divs = append(n.divs, Divergence{Kind: DivergeHTTP, Path: fmt.Sprintf("request %d", seq), Replayed: replayed, Detail: detail})
}

// exchangeName names a recorded exchange in a divergence.
func exchangeName(ex *conversation.Exchange) string {
	return fmt.Sprintf("request %d (%s %s)", ex.Seq, ex.Method, ex.URL)
}

// replayNet gives each call verify runs the replaying Net, journaling
// nothing, in place of the live one.
func replayNet(n *netReplay) func(conversation.ToolCall, sandbox.Net) *netJournal {
	return func(c conversation.ToolCall, _ sandbox.Net) *netJournal {
		return &netJournal{inner: n, write: func(...checkpoint.Record) error { return nil }, call: c}
	}
}

// withoutSecrets is ref with no secrets in its network grant: a replay
// sends nothing, so it needs none, and they need not be set.
func withoutSecrets(ref ToolRef) ToolRef {
	if ref.Grant == nil || ref.Grant.Net == nil || len(ref.Grant.Net.Secrets) == 0 {
		return ref
	}
	g := *ref.Grant
	net := *g.Net
	net.Secrets = nil
	g.Net = &net
	ref.Grant = &g
	return ref
}
