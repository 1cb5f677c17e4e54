package web

import (
	"net/http"
	"strings"
	"testing"
)

// Pause of an agent whose call awaits a decision is 409 with the
// message `cairn pause` prints: the call that waits and how to decide
// it. It once said the agent was not running and to resume it.
func TestPauseOfAgentAwaitingApprovalSaysHowToDecide(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	var e apiError
	f.decode(f.post("/api/agents/ap/pause", struct{}{}), http.StatusConflict, &e)
	for _, want := range []string{"awaiting approval of call_1_0 (write_file)", "`cairn approve ap call_1_0`", "`cairn deny ap call_1_0"} {
		if !strings.Contains(e.Error, want) {
			t.Errorf("pause answered %q, want it to say %q", e.Error, want)
		}
	}
}
