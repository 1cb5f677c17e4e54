package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: the bytes of a response body that failed (past
// max_response_bytes here, or cut off by a timeout) were received from the
// network and counted nowhere: a server could make each call download its
// limit once per request, and `cairn show`, the call's tool_end and the
// agent's usage said 0 bytes received. The exchange records the bytes of
// the body that were read, and they count as received.
func TestNetUsageCountsTheBytesOfAFailedResponse(t *testing.T) {
	s := newNetServer(t) // /big answers 2,000 bytes
	af := netAgent(t, fmt.Sprintf(`{net: {allow: ["%s"], max_response_bytes: 1000}}`, s.hostPort()), fmt.Sprintf(`{url: "%s/big"}`, s.URL))
	eng, store := fileEngine(t)
	var events []Event
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, Prompt: "go", OnEvent: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	exs := exchangesOf(t, store, res.Agent)
	if len(exs) != 1 || exs[0].Step != conversation.ExchangeFailed || exs[0].ResponseSize != 1001 {
		t.Fatalf("exchanges %+v, want one failed that read 1,001 bytes", exs)
	}
	if c := toolEnds(events)[0]; c.Net == nil || c.Net.ReceivedBytes != 1001 {
		t.Errorf("the call's tool_end counts %+v", c.Net)
	}
	in, err := Inspect(t.Context(), store, res.Agent)
	if err != nil {
		t.Fatal(err)
	}
	if u := in.NetUsage(); u == nil || u.Requests != 1 || u.ReceivedBytes != 1001 {
		t.Errorf("cairn show counts %+v", u)
	}
	if u := in.State.Usage; u.NetRequests != 1 || u.NetReceivedBytes != 1001 {
		t.Errorf("the agent's usage counts %d requests, %d bytes received", u.NetRequests, u.NetReceivedBytes)
	}
}
