package host

import (
	"slices"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A call of an interrupted round that finished, whose result resume
// keeps, is not listed as in flight (`cairn show` once listed every call
// of the round); the round is still open.
func TestFinishedCallNotListedInFlight(t *testing.T) {
	turn := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
		{ID: "call_2_0", Name: "http"}, {ID: "call_2_1", Name: "http"}, {ID: "call_2_2", Name: "read_file"}}}
	in := &Inspection{Tail: []checkpoint.Record{
		{Type: checkpoint.RecTurn, Round: 2, Message: &turn},
		{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_0", Phase: checkpoint.PhaseExecuting},
		{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_1", Phase: checkpoint.PhaseExecuting},
		{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_2", Phase: checkpoint.PhaseExecuting},
		{Type: checkpoint.RecResult, Round: 2, Call: "call_2_0", Result: &checkpoint.Result{Output: "ok"}},
		{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_2", Phase: checkpoint.PhaseFinished},
	}}
	if got := in.InterruptedCalls(); !slices.Equal(got, []string{"call_2_1 http"}) {
		t.Fatalf("in flight: %q", got)
	}
	if !in.RoundOpen() {
		t.Fatal("the round is not open")
	}
	if (&Inspection{}).RoundOpen() {
		t.Fatal("an agent with no tail has a round open")
	}
}
