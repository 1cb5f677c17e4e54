package host

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: a call that one resume sealed, in a round that stayed open
// (another call of it awaited approval), was reported by the next resume
// as "kept: it had finished", since its sealed result was counted as a
// finished call's. It is reported sealed, by an earlier resume, and its
// result is not journaled a second time.
func TestSecondResumeReportsAnEarlierSealAsSealed(t *testing.T) {
	eng, store, id := afterRound1(t, resumeScript, "crashed", func(log checkpoint.Log) error {
		turn := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
			{ID: "call_2_0", Name: "echo", Input: `{"text":"two","n":2}`},
			{ID: "call_2_1", Name: "echo", Input: `{"text":"three","n":3}`}}}
		return log.Append(
			checkpoint.Record{Type: checkpoint.RecRunStarted, Run: &checkpoint.RunInfo{ID: "run-crashed"}},
			checkpoint.Record{Type: checkpoint.RecTurn, Round: 2, Message: &turn},
			checkpoint.Record{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_1", Tool: "echo", Phase: checkpoint.PhaseApprovalRequired},
			checkpoint.Record{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_0", Tool: "echo", Phase: checkpoint.PhaseExecuting})
	})
	res, events := resume(t, eng, id, StrategySeal)
	first := eventOf(events, EventAgentResumed)
	if res.Status != StatusAwaitingApproval || first == nil || len(first.Sealed) != 1 || first.Sealed[0].Call != "call_2_0" || first.Sealed[0].Earlier {
		t.Fatalf("first resume: %+v, %+v", res, first)
	}
	must(t, eng.Decide(context.Background(), id, "call_2_1", Decision{Approved: true}))
	res, events = resume(t, eng, id, StrategySeal)
	second := eventOf(events, EventAgentResumed)
	if second == nil || slices.Contains(second.Finished, "call_2_0") || len(second.Sealed) != 1 ||
		second.Sealed[0].Call != "call_2_0" || !second.Sealed[0].Earlier || second.Sealed[0].Phase != checkpoint.PhaseExecuting {
		t.Fatalf("second resume's report: %+v", second)
	}
	if res.Status != StatusDone {
		t.Fatalf("second resume: %+v", res)
	}
	rec, err := store.Read(id)
	must(t, err)
	var results []string
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool && m.CallID == "call_2_0" {
			results = append(results, m.Text)
		}
	}
	if len(results) != 1 || !strings.Contains(results[0], "This call was interrupted") {
		t.Errorf("call_2_0's results: %q, want the one seal", results)
	}
}
