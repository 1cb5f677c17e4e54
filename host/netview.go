package host

import (
	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/view"
)

// NetUsage sums the network use of every call the agent's committed
// rounds made; nil when none reached for the network.
func (in *Inspection) NetUsage() *NetUsage {
	var all []conversation.Exchange
	for _, m := range in.State.Messages {
		all = append(all, m.Net...)
	}
	return netUsage(all)
}

// InterruptedExchanges lists the exchanges of the interrupted round's
// calls as the journal left them, each as "CALL: " and its ExchangeLine.
func (in *Inspection) InterruptedExchanges() []string {
	var out []string
	var calls []string
	byCall := map[string][]conversation.Exchange{}
	for _, r := range in.Tail {
		if r.Type != checkpoint.RecExchange {
			continue
		}
		list := byCall[r.Call]
		if len(list) == 0 {
			calls = append(calls, r.Call)
		}
		if n := len(list); n > 0 && list[n-1].Seq == r.Exchange.Seq {
			list[n-1] = merged(list[n-1], *r.Exchange)
		} else {
			list = append(list, *r.Exchange)
		}
		byCall[r.Call] = list
	}
	for _, c := range calls {
		for _, e := range byCall[c] {
			out = append(out, c+": "+view.ExchangeLine(e))
		}
	}
	return out
}

// merged is a requesting record's exchange with the outcome that ended it.
func merged(req, end conversation.Exchange) conversation.Exchange {
	end.RequestHeader, end.RequestDigest, end.RequestSize = req.RequestHeader, req.RequestDigest, req.RequestSize
	return end
}
