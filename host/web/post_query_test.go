package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: a state change's query string was not read and not
// refused, so POST /fork?as=twin forked, as w-fork-…, an agent no one
// asked for, and /approvals/{call}/deny?reason=... recorded the denial
// without its reason. A state change reads its body only: a query is
// 400, naming the body's fields, and nothing is done.
func TestStateChangeWithAQueryIsRefused(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	f.awaiting("ap")
	for _, path := range []string{
		"/api/agents/w/fork?as=twin", "/api/agents/w/snapshot?label=l", "/api/agents/w/resume?strategy=replay",
		"/api/agents/w/pause?now=1", "/api/agents/ap/approvals/call_1_0/deny?reason=no",
	} {
		var e apiError
		f.decode(f.postRaw(path, ""), http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, "query") || !strings.Contains(e.Error, "body") {
			t.Errorf("POST %s: %q, want it to say a state change reads its body, not a query", path, e.Error)
		}
	}
	list := []map[string]any{}
	f.getJSON("/api/agents", &list)
	var v, w agentView
	f.getJSON("/api/agents/ap", &v)
	f.getJSON("/api/agents/w", &w)
	if len(list) != 2 || len(v.Awaiting) != 1 || len(w.Bookmarks) != 0 {
		t.Fatalf("a refused state change was carried out: %d agents, ap awaits %d calls, w has bookmarks %v", len(list), len(v.Awaiting), w.Bookmarks)
	}
}
