package web

import (
	"net/http"
	"slices"
	"testing"
)

// Regression: the agent of a run going on listed the call that run was
// taking among its interrupted_calls, though nothing had interrupted it.
// While a process holds the agent its calls without a result are
// in_flight_calls; once the run has stopped with its round open they are
// interrupted_calls, for resume to keep or seal.
func TestRunningAgentsCallsAreInFlightNotInterrupted(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.spinning()
	var running map[string]any
	f.getJSON("/api/agents/spin", &running)
	if running["status"] != "running" || running["interrupted_calls"] != nil || !listHas(running["in_flight_calls"], "call_1_0 spin") {
		t.Fatalf("while its run spins: status %v, in_flight_calls %v, interrupted_calls %v",
			running["status"], running["in_flight_calls"], running["interrupted_calls"])
	}
	f.decode(f.post("/api/agents/spin/pause", struct{}{}), http.StatusAccepted, nil)
	f.srv.wg.Wait()
	var paused map[string]any
	f.getJSON("/api/agents/spin", &paused)
	if paused["status"] != "paused" || paused["in_flight_calls"] != nil || !listHas(paused["interrupted_calls"], "call_1_0 spin") {
		t.Fatalf("once paused: status %v, in_flight_calls %v, interrupted_calls %v",
			paused["status"], paused["in_flight_calls"], paused["interrupted_calls"])
	}
}

// listHas reports whether v, a JSON array, holds s.
func listHas(v any, s string) bool {
	list, _ := v.([]any)
	return slices.Contains(list, any(s))
}
