package main

import (
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: cairn log said "the 5 messages above are summarised" (and
// cairn events "the 5 oldest messages") of a cut that kept the first of
// them, the task, in what the model is sent, word for word. The count is
// of the messages left out, and says the task is not one of them.
func TestLogCountsWhatACutLeavesOut(t *testing.T) {
	for _, c := range []struct {
		cut        checkpoint.Compaction
		log, event string
	}{
		{checkpoint.Compaction{Round: 3, From: 5, Pinned: 0, Summary: "Read a.", Before: 90, After: 30},
			"── context cut for round 3: 4 of the 5 messages above, all but the task, are summarised in what the model is sent",
			"· context: 4 of the 5 oldest messages, all but the task, summarised for round 3"},
		{checkpoint.Compaction{Round: 3, From: 5, Pinned: -1, Before: 90, After: 30},
			"── context cut for round 3: the 5 messages above are left out of what the model is sent",
			"· context: the 5 oldest messages left out for round 3"},
	} {
		var b strings.Builder
		printCompaction(&b, c.cut)
		if !strings.HasPrefix(b.String(), c.log) {
			t.Errorf("cut %+v: log says\n%s\nwant it to start\n%s", c.cut, b.String(), c.log)
		}
		if got := compactionEvent(&c.cut); !strings.HasPrefix(got, c.event) {
			t.Errorf("cut %+v: events say\n%s\nwant it to start\n%s", c.cut, got, c.event)
		}
	}
}
