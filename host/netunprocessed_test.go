package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/view"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// refusingNet is a Net whose every request reached a server that said it
// did not process it, with the error netguard gives for it.
type refusingNet struct{ err error }

func (n refusingNet) RoundTrip(context.Context, *sandbox.NetRequest) (*sandbox.NetResponse, error) {
	return nil, n.err
}

// Regression: a POST an HTTP/2 server said it did not process (its
// stream reset with REFUSED_STREAM, or a GOAWAY naming an earlier
// request as the last processed) was told to the tool as "may be sent
// again" and journaled as failed, like a request the server may have
// acted on: after a crash of its call, the seal told the model to check
// the remote side before retrying, and `cairn show` and `cairn log`
// listed it as "sent, no response". It is journaled as unprocessed: the
// call, killed after its only request was so refused and before its
// result was journaled, is sealed as having changed nothing, with the
// advice to retry, and listed as not processed. A journal written before
// reads as it did: its failed record still asks to check the remote side.
func TestNetUnprocessedRequestIsSealedAsSafeToRepeat(t *testing.T) {
	const refused = "no response: the server reset the request's HTTP/2 stream with code REFUSED_STREAM (0x7), which says it did not process the request (RFC 9113, section 8.7): it reached the server, which did not act on it; it was not sent again, and may be sent again"
	call := conversation.ToolCall{ID: "c1", Name: "http"}
	var recs []checkpoint.Record
	j := &netJournal{inner: refusingNet{fmt.Errorf("%s: %w", refused, netguard.ErrNotProcessed)}, round: 1, call: call,
		write: func(r ...checkpoint.Record) error { recs = append(recs, r...); return nil }}
	if _, err := j.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: "https://api.test/order", Body: []byte("an order")}); !errors.Is(err, netguard.ErrNotProcessed) {
		t.Fatalf("the tool is told %v", err)
	}
	// The crash: the exchange's records are journaled, the call's result is not.
	if len(recs) != 2 || recs[1].Exchange.Step != conversation.ExchangeUnprocessed {
		t.Fatalf("journaled %d records, the last %+v", len(recs), recs[len(recs)-1].Exchange)
	}
	line := view.ExchangeLine(j.done[0])
	if !strings.Contains(line, "→ sent, not processed by the server (safe to send again): "+refused) {
		t.Errorf("cairn log lists %s", line)
	}
	for _, l := range (&Inspection{Tail: recs}).InterruptedExchanges() {
		if !strings.Contains(l, "not processed by the server") {
			t.Errorf("cairn show lists %s", l)
		}
	}
	if u := netUsage(j.done); u.Requests != 1 || u.SentBytes != 8 {
		t.Errorf("it was sent, and its usage says %+v", u)
	}
	if sentMutating(recs) {
		t.Error("replay refuses the round for a POST the server did not process")
	}
	seal := sealOf(call, recs)
	if seal.Effects != EffectsNone || seal.Recommendation != "retry: the call did not finish and changed nothing" ||
		strings.Contains(seal.message(), "check the remote side") || strings.Contains(seal.message(), "on the remote side: unknown") ||
		EffectsUnknownSeal(seal.message()) {
		t.Errorf("seal %+v: %s", seal, seal.message())
	}

	// A journal from before: the same request, journaled as failed.
	old := []checkpoint.Record{recs[0], recs[1]}
	ex := *old[1].Exchange
	ex.Step = conversation.ExchangeFailed
	old[1].Exchange = &ex
	if seal := sealOf(call, old); seal.Effects != EffectsUnknown || !strings.HasPrefix(seal.Recommendation, "check the remote side before retrying: POST https://api.test/order") {
		t.Errorf("a journal from before reads otherwise than it did: %+v", seal)
	}
	if line := view.ExchangeLine(ex); !strings.HasPrefix(line, "POST https://api.test/order → sent, no response: ") {
		t.Errorf("cairn log lists a failed record of before as %s", line)
	}
}

// sealOf is the seal of call, in flight at a crash with recs its records.
func sealOf(call conversation.ToolCall, recs []checkpoint.Record) Seal {
	var list []SealedExchange
	for _, r := range recs {
		list = addExchange(list, *r.Exchange)
	}
	return (&run{tools: &toolset{tools: map[string]*tool{}}}).seal(call, checkpoint.PhaseExecuting, list)
}
