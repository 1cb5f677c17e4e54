package web

import (
	"net/http"
	"strings"
	"testing"
)

// Regression: ?follow=true, or an Accept header that lists
// text/event-stream among others ("text/event-stream, */*"), was taken
// for a request not to follow: the answer was JSON Lines, to a client
// that waited for events, and ?follow=yes was not refused. follow is
// now a boolean as strconv reads one (1, t, true, 0, f, false ...),
// anything else 400, and an Accept that lists text/event-stream asks for
// the stream.
func TestFollowParameterAndAcceptListAskForTheStream(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for _, c := range []struct {
		query, accept, want string
	}{
		{"?follow=1", "", "text/event-stream"},
		{"?follow=true", "", "text/event-stream"},
		{"?follow=TRUE", "", "text/event-stream"},
		{"", "text/event-stream", "text/event-stream"},
		{"", "text/event-stream, */*", "text/event-stream"},
		{"", "application/json;q=0.9, text/event-stream;q=1", "text/event-stream"},
		{"?follow=0", "", "application/x-ndjson"},
		{"?follow=false", "", "application/x-ndjson"},
		{"", "*/*", "application/x-ndjson"},
		{"", "text/event-stream;q=0, */*", "application/x-ndjson"},
		{"?follow=yes", "", "application/json"},
		{"?follow=2", "", "application/json"},
	} {
		var header []string
		if c.accept != "" {
			header = []string{"Accept", c.accept}
		}
		resp := f.do("/api/agents/w/events"+c.query, nil, "", header...)
		if ct := resp.Header.Get("Content-Type"); ct != c.want {
			t.Errorf("events%s, Accept %q: %s %q, want %q", c.query, c.accept, resp.Status, ct, c.want)
			continue
		}
		if c.want == "application/json" {
			var e apiError
			f.decode(resp, http.StatusBadRequest, &e)
			if !strings.Contains(e.Error, "follow") {
				t.Errorf("events%s: %q, want it to name follow", c.query, e.Error)
			}
		}
	}
}
