package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: pause of an agent that cannot be read answered 409 "agent
// X is : agent is not running", an empty status. It says the agent is
// unreadable and why, as `cairn pause` does.
func TestPauseOfAnUnreadableAgentSaysWhy(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("x", doneAgent, doneScript)
	f.damageSnapshot("x")
	var e apiError
	f.decode(f.post("/api/agents/x/pause", struct{}{}), http.StatusConflict, &e)
	if !strings.HasPrefix(e.Error, "agent x is unreadable: agent is not running, nothing to pause; read snapshot of agent") ||
		!strings.Contains(e.Error, "is corrupt at offset") {
		t.Fatalf("pause answered %q; want it to say the agent is unreadable and why", e.Error)
	}
}
