package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: a body's field names were matched as encoding/json matches
// them, ignoring case, and a field given twice took its last value: {"AS":
// "x"} forked as x, {"Reason": ...} was a denial's reason, and {"as":
// "a", "as": "b"} forked as b where a reader of the body may take it for
// a. The route's own spelling is now the only one, and a field given
// twice is 400 naming it; nothing is done.
func TestBodyFieldsAreMatchedExactlyAndOnce(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	f.awaiting("ap")
	for _, c := range []struct{ path, body, names string }{
		{"/api/agents/w/fork", `{"AS": "x"}`, "AS"},
		{"/api/agents/w/fork", `{"as": "a", "as": "b"}`, `"as"`},
		{"/api/agents/w/snapshot", `{"Label": "l"}`, "Label"},
		{"/api/agents/w/resume", `{"STRATEGY": "manual"}`, "STRATEGY"},
		{"/api/agents/ap/approvals/call_1_0/deny", `{"Reason": "no"}`, "Reason"},
		{"/api/agents/ap/approvals/call_1_0/deny", `{"reason": "a", "reason": "b"}`, `"reason"`},
	} {
		var e apiError
		f.decode(f.postRaw(c.path, c.body), http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, c.names) {
			t.Errorf("POST %s %s: %q, want it to name %s", c.path, c.body, e.Error, c.names)
		}
	}
	for _, id := range []string{"x", "a", "b"} {
		if f.store.Exists(id) {
			t.Errorf("a refused fork made agent %s", id)
		}
	}
	var v agentView
	f.getJSON("/api/agents/ap", &v)
	var w agentView
	f.getJSON("/api/agents/w", &w)
	if len(v.Awaiting) != 1 || len(w.Bookmarks) != 0 {
		t.Fatalf("a refused request was carried out: ap awaits %d calls, w has bookmarks %v", len(v.Awaiting), w.Bookmarks)
	}
	f.decode(f.postRaw("/api/agents/ap/approvals/call_1_0/deny", `{"reason": "no"}`), http.StatusOK, nil)
}
