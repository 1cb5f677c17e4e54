package web

import (
	"io"
	"net/http"
	"testing"
)

// Regression: the page's look at an agent every two seconds was answered
// with the whole agent view each time, though nothing had changed. The
// view carries an ETag (and stays no-store: the page keeps the tag); a
// look that sends it back while the agent is as it was is answered 304
// with no body, and one after a change, 200 with the view and a new tag.
func TestAgentViewAnswers304WhileUnchanged(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	first := f.do("/api/agents/ap", nil, "")
	tag := first.Header.Get("ETag")
	if first.StatusCode != http.StatusOK || tag == "" || first.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET: %d, ETag %q, Cache-Control %q", first.StatusCode, tag, first.Header.Get("Cache-Control"))
	}
	again := f.do("/api/agents/ap", nil, "", "If-None-Match", tag)
	body, _ := io.ReadAll(again.Body)
	if again.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("GET with its tag, the agent unchanged: %d, %d bytes; want 304 and no body", again.StatusCode, len(body))
	}
	f.decode(f.post("/api/agents/ap/approvals/call_1_0/approve", struct{}{}), http.StatusOK, nil)
	after := f.do("/api/agents/ap", nil, "", "If-None-Match", tag)
	if after.StatusCode != http.StatusOK || after.Header.Get("ETag") == tag {
		t.Fatalf("GET with the old tag after a decision: %d, ETag %q; want 200 and a new tag", after.StatusCode, after.Header.Get("ETag"))
	}
}
