package host

import (
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// A seal says of each request of a call in flight whether it was sent and
// answered, and recommends checking the remote side only when a request
// not safe to repeat may have reached it.
func TestNetSeal(t *testing.T) {
	c := conversation.ToolCall{ID: "c1", Name: "http"}
	ex := func(seq int, step conversation.ExchangeStep, method string) conversation.Exchange {
		return conversation.Exchange{Seq: seq, Step: step, Method: method, URL: "http://api.test/x", Status: 200}
	}
	for _, tc := range []struct {
		name    string
		records []conversation.Exchange
		effects string
		advice  string
		states  string
	}{
		{"GET answered, then killed", []conversation.Exchange{ex(1, conversation.ExchangeRequesting, "GET"), ex(1, conversation.ExchangeReceived, "GET")},
			EffectsNone, "retry", "sent, response 200 received"},
		{"POST waiting", []conversation.Exchange{ex(1, conversation.ExchangeRequesting, "POST")},
			EffectsUnknown, "check the remote side before retrying: POST http://api.test/x", "sent, response not received"},
		{"POST answered, DELETE refused", []conversation.Exchange{ex(1, conversation.ExchangeRequesting, "POST"), ex(1, conversation.ExchangeReceived, "POST"),
			ex(2, conversation.ExchangeRefused, "DELETE")},
			EffectsUnknown, "check the remote side", "sent, response 200 received|refused, not sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var list []SealedExchange
			for _, e := range tc.records {
				list = addExchange(list, e)
			}
			r := &run{tools: &toolset{tools: map[string]*tool{}}}
			s := r.seal(c, checkpoint.PhaseExecuting, list)
			var states []string
			for _, e := range s.Net {
				states = append(states, e.State())
			}
			if s.Effects != tc.effects || !strings.HasPrefix(s.Recommendation, tc.advice) || strings.Join(states, "|") != tc.states {
				t.Fatalf("seal %+v, states %q", s, states)
			}
			if !strings.Contains(s.message(), "Its network requests: 1. ") {
				t.Fatalf("the model is not told of the requests: %s", s.message())
			}
			// Regression: a call that sent a POST was said to have unknown
			// effects on the workspace, and in the same message that its
			// changes to the workspace were not kept.
			if tc.effects == EffectsUnknown && (strings.Contains(s.message(), "workspace: unknown") ||
				!strings.Contains(s.message(), "on the workspace: none (its changes were not kept); on the remote side: unknown")) {
				t.Fatalf("the seal's words on its effects: %s", s.message())
			}
			if EffectsUnknownSeal(s.message()) != (tc.effects == EffectsUnknown) {
				t.Fatalf("EffectsUnknownSeal(%q) = %v", s.message(), !(tc.effects == EffectsUnknown))
			}
		})
	}
}
