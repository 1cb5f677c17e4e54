package web

import (
	"testing"
)

// A reconnecting EventSource sends Last-Event-ID to the URL it was opened
// with: the header says where the client has read to and wins over the
// URL's after=, which says where the stream began. after= once won, and a
// reconnection replayed what the client had.
func TestLastEventIDWinsOverAfter(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	_, ids := sse(t, f.do("/api/agents/w/events?follow=1&after=2", nil, "", "Last-Event-ID", "5"))
	if len(ids) == 0 || ids[0] != "6" {
		t.Fatalf("after=2 with Last-Event-ID 5: the stream's ids begin %v, want 6", ids)
	}
	_, ids = sse(t, f.do("/api/agents/w/events?follow=1&after=2", nil, ""))
	if len(ids) == 0 || ids[0] != "3" {
		t.Fatalf("after=2 alone: the stream's ids begin %v, want 3", ids)
	}
}
