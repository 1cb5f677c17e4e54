package host

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// TestEventLine: each line is json.Marshal's bytes and a newline, whether
// written at once or held and released in one write; an event that cannot
// be encoded is left out and leaves the others whole.
func TestEventLine(t *testing.T) {
	events := []Event{
		{Type: EventModelTurn, Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Agent: "a", Run: "r", Round: 1},
		{Type: EventToolEnd, Round: 1, Call: &Call{ID: "c1", Tool: "read_file", Outcome: OutcomeOK, Output: "<a & b>\n\u2028", DurationMS: 0.25}},
		{Type: EventWarning, Call: &Call{DurationMS: math.NaN()}}, // json refuses NaN
		{Type: EventRoundEnd, Round: 1, Text: "done"},
	}
	var want bytes.Buffer
	for _, e := range events {
		if b, err := json.Marshal(e); err == nil {
			want.Write(append(b, '\n'))
		}
	}
	var l eventLine
	var direct, held countingWriter
	for i := range events {
		l.write(&events[i], &direct)
	}
	l.held = true
	for i := range events {
		l.write(&events[i], &held)
	}
	if held.writes != 0 {
		t.Fatalf("held lines were written before the release: %d writes", held.writes)
	}
	l.release(&held)
	if direct.String() != want.String() {
		t.Errorf("lines written at once:\n%s\nwant\n%s", direct.String(), want.String())
	}
	if held.String() != want.String() || held.writes != 1 {
		t.Errorf("held lines (%d writes):\n%s\nwant one write of\n%s", held.writes, held.String(), want.String())
	}
	if direct.writes != 3 {
		t.Errorf("%d writes at once, want 3 (one event cannot be encoded)", direct.writes)
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}
