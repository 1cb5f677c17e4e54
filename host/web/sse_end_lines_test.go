package web

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

// Regression: the "end" event of an SSE stream wrote its error as one
// data: line, so an error of several lines (errors.Join makes them)
// ended the event at its first newline: a browser read only the first
// line, and the rest as lines of no field. Each line is a data: line of
// its own, which the client joins with newlines.
func TestStreamEndOfAnErrorOfSeveralLines(t *testing.T) {
	rec := httptest.NewRecorder()
	lw := newLineWriter(rec, true)
	lw.end(errors.Join(errors.New("first: it stopped"), errors.New("second: and why")))
	want := "event: end\ndata: first: it stopped\ndata: second: and why\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("the end event:\n%q\nwant\n%q", got, want)
	}
	if strings.Count(rec.Body.String(), "\n\n") != 1 {
		t.Fatal("the end event is not one event")
	}
}
