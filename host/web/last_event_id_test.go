package web

import (
	"net/http"
	"strings"
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

// Regression: a Last-Event-ID that is no event id of this stream was
// refused as an `after "x"`, naming a parameter the request did not
// send. The refusal names the header the value came in.
func TestBadLastEventIDIsNamed(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for _, c := range []struct{ path, header, says string }{
		{"/api/agents/w/events?follow=1", "abc", `Last-Event-ID "abc": want the number of lines already read`},
		{"/api/agents/w/events?follow=1&after=x", "", `after "x": want the number of lines already read`},
	} {
		var header []string
		if c.header != "" {
			header = []string{"Last-Event-ID", c.header}
		}
		var e apiError
		f.decode(f.do(c.path, nil, "", header...), http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, c.says) {
			t.Errorf("%s with Last-Event-ID %q: %q, want it to say %q", c.path, c.header, e.Error, c.says)
		}
	}
}
