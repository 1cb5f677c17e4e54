package checkpoint

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// TestAppendRecordFrame: a record's frame encoded in place is the bytes of
// appendFrame with encodeRecord's payload, after what the buffer held;
// a record that cannot be encoded leaves the buffer as it was.
func TestAppendRecordFrame(t *testing.T) {
	at := time.Date(2026, 11, 24, 8, 0, 0, 123456789, time.UTC)
	recs := []Record{
		{Type: RecUser, Time: at, Message: &conversation.Message{Role: conversation.RoleUser, Text: "go"}},
		{Type: RecTurn, Time: at, Message: &conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "read_file", Input: `{"path":"f.txt"}`}}},
			Usage: &conversation.Usage{InputTokens: 12, OutputTokens: 3}},
		{Type: RecPhase, Time: at, Round: 3, Call: "c1", Tool: "read_file", Phase: PhaseExecuting},
		{Type: RecResult, Time: at, Round: 3, Call: "c1", Tool: "read_file", Result: &Result{Output: strings.Repeat("a line\n", 5000), DurationMS: 0.5}},
		{Type: RecCommit, Time: at, Round: 3, Writer: "epoch"},
	}
	var want []byte
	var got bytes.Buffer
	got.WriteString("before")
	want = append(want, "before"...)
	for _, rec := range recs {
		payload, err := encodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		want = appendFrame(want, rec.Type, payload)
		if err := appendRecordFrame(&got, rec); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("frames encoded in place differ from appendFrame's (%d bytes, want %d)", got.Len(), len(want))
	}
	bad := Record{Type: RecResult, Result: &Result{Output: "x", DurationMS: math.Inf(1)}, Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := encodeRecord(bad); err == nil {
		t.Skip("the library encodes the record meant to fail")
	}
	if err := appendRecordFrame(&got, bad); err == nil || !bytes.Equal(got.Bytes(), want) {
		t.Errorf("a record that cannot be encoded: error %v, buffer changed %v", err, !bytes.Equal(got.Bytes(), want))
	}
	if err := appendRecordFrame(&got, Record{Type: RecState}); err == nil {
		t.Error("a state record was framed")
	}
}
