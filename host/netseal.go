package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// SealedExchange is one HTTP exchange of a sealed call: what was asked
// and how far it got.
type SealedExchange struct {
	Seq    int    `json:"seq"`
	Method string `json:"method"`
	URL    string `json:"url"`
	// TakenAs are the methods its request's override headers
	// (X-HTTP-Method-Override...) asked the server to take it as: it is
	// judged by the stricter of Method and these.
	TakenAs []string `json:"taken_as,omitempty"`
	// Sent: the request may have reached the remote side (it was
	// journaled as requesting and not refused). Received: its response
	// came back and was journaled, Status its status.
	Sent     bool `json:"sent"`
	Received bool `json:"received"`
	// NotProcessed: it was sent, and the server said it did not process
	// it (conversation.ExchangeUnprocessed): it is safe to send again.
	NotProcessed bool   `json:"not_processed,omitempty"`
	Status       int    `json:"status,omitempty"`
	Error        string `json:"error,omitempty"`
}

// addExchange folds one exchange record into a call's list.
func addExchange(list []SealedExchange, ex conversation.Exchange) []SealedExchange {
	i := len(list) - 1
	if i < 0 || list[i].Seq != ex.Seq {
		list = append(list, SealedExchange{Seq: ex.Seq, Method: ex.Method, URL: ex.URL})
		i++
	}
	for _, o := range netguard.MethodOverrides(ex.RequestHeader) {
		list[i].TakenAs = append(list[i].TakenAs, o.Method)
	}
	e := &list[i]
	e.Sent = ex.Sent()
	e.Received = ex.Step == conversation.ExchangeReceived
	e.NotProcessed = ex.Step == conversation.ExchangeUnprocessed
	e.Status, e.Error = ex.Status, ex.Error
	return list
}

// endExchange folds one exchange record into a call's exchanges, each as
// it ended: a closing record leaves out the request, which the record
// before it (requesting) carries.
func endExchange(list []conversation.Exchange, ex conversation.Exchange) []conversation.Exchange {
	i := len(list) - 1
	if i < 0 || list[i].Seq != ex.Seq {
		return append(list, ex)
	}
	req := list[i]
	list[i] = ex
	if ex.RequestHeader == nil && ex.RequestDigest == "" && ex.RequestSize == 0 {
		list[i].RequestHeader, list[i].RequestDigest, list[i].RequestSize = req.RequestHeader, req.RequestDigest, req.RequestSize
	}
	return list
}

// sentExchanges are those that may have reached the remote side and
// been acted on there: not one refused, nor one the server said it did
// not process.
func sentExchanges(net []SealedExchange) []SealedExchange {
	var out []SealedExchange
	for _, e := range net {
		if e.Sent && !e.NotProcessed {
			out = append(out, e)
		}
	}
	return out
}

// netSeal seals a call that sent requests: its workspace changes were
// staged and are dropped, but what it sent may have acted on the remote
// side. For a request that is not safe to repeat (POST, PUT, PATCH,
// DELETE...), the recommendation is to check the remote side first.
func netSeal(c conversation.ToolCall, p checkpoint.Phase, net, sent []SealedExchange) Seal {
	var mutating []string
	for _, e := range sent {
		if e.mutating() {
			mutating = append(mutating, e.request())
		}
	}
	s := Seal{Call: c.ID, Tool: c.Name, Phase: p, Effects: EffectsNone, Net: net,
		Recommendation: "retry: its requests only asked for something (GET, HEAD), and it changed nothing in the workspace"}
	if slices.ContainsFunc(net, func(e SealedExchange) bool { return e.NotProcessed }) {
		s.Recommendation = "retry: its requests only asked for something (GET, HEAD) or were not processed by the server, and it changed nothing in the workspace"
	}
	if len(mutating) > 0 {
		s.Effects = EffectsUnknown
		s.Recommendation = "check the remote side before retrying: " + strings.Join(mutating, ", ") +
			" was sent and may have taken effect there; its changes to the workspace were not kept"
	}
	return s
}

// netMessage says, for the model, what a sealed call sent.
func netMessage(net []SealedExchange) string {
	if len(net) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" Its network requests:")
	for _, e := range net {
		fmt.Fprintf(&b, " %d. %s: %s;", e.Seq, e.request(), e.State())
	}
	return strings.TrimSuffix(b.String(), ";") + "."
}

// mutating reports whether the request is not safe to repeat: by its
// method, or by a method an override header asked the server to take it
// as, the stricter of the two.
func (e SealedExchange) mutating() bool {
	if (conversation.Exchange{Method: e.Method}).Mutating() {
		return true
	}
	for _, m := range e.TakenAs {
		if (conversation.Exchange{Method: m}).Mutating() {
			return true
		}
	}
	return false
}

// request names the request: method, URL, and the methods it asked to
// be taken as.
func (e SealedExchange) request() string {
	s := e.Method + " " + e.URL
	if len(e.TakenAs) > 0 {
		s += " (asking to be taken as " + strings.Join(e.TakenAs, ", ") + ")"
	}
	return s
}

// State says how far the exchange got, in words.
func (e SealedExchange) State() string {
	switch {
	case e.Received:
		return fmt.Sprintf("sent, response %d received", e.Status)
	case !e.Sent:
		return "refused, not sent"
	case e.NotProcessed:
		return "sent, not processed by the server, safe to send again (" + e.Error + ")"
	case e.Error != "":
		return "sent, no response (" + e.Error + ")"
	}
	return "sent, response not received"
}

// sentMutating reports whether a call of an interrupted round sent a
// request that is not safe to repeat: replaying the round would send it
// again. Each exchange is judged by its last record, as the seal judges
// it: a request journaled as requesting and then refused (never sent)
// is not one.
func sentMutating(tail []checkpoint.Record) bool {
	byCall := map[string][]SealedExchange{}
	for _, t := range tail {
		if t.Type == checkpoint.RecExchange {
			byCall[t.Call] = addExchange(byCall[t.Call], *t.Exchange)
		}
	}
	for _, net := range byCall {
		for _, e := range sentExchanges(net) {
			if e.Method != "" && e.mutating() {
				return true
			}
		}
	}
	return false
}
