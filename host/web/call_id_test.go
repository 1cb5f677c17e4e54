package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: a call id in the path of a decision that cannot be a
// call's ("..", "%2e%2e", "a%2Fb", a NUL) was looked up among the calls
// that wait and answered 409, "does not await approval", as if it were a
// call that had been decided already. It is the request's mistake: 400,
// naming the call id, before the agent is looked at; and the dots, raw
// or escaped, reach no other agent's call.
func TestCallIDThatCannotBeOneIs400(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	f.awaiting("other")
	for _, call := range []string{
		".", "..", "%2e", "%2e%2e", "%2E%2E", "a%2Fb", "%2F", "..%2F..%2Fother%2Fapprovals%2Fcall_1_0",
		"%5C", "a%00b", "a%0Ab", strings.Repeat("c", 300),
	} {
		for _, verb := range []string{"approve", "deny"} {
			path := "/api/agents/ap/approvals/" + call + "/" + verb
			resp := f.doMethod("POST", path, struct{}{})
			var e apiError
			f.decode(resp, http.StatusBadRequest, &e)
			if !strings.Contains(e.Error, "call id") && !strings.Contains(e.Error, "not clean") {
				t.Errorf("POST %s: %q, want it to say the call id is bad", path, e.Error)
			}
		}
	}
	for _, id := range []string{"ap", "other"} {
		var pending []map[string]any
		f.getJSON("/api/agents/"+id+"/approvals", &pending)
		if len(pending) != 1 {
			t.Errorf("agent %s: %d calls wait, want its one call still waiting", id, len(pending))
		}
	}
}
