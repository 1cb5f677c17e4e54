package main

import (
	"io"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// A call whose changes were refused is shown with ✗ and the note that
// says which were refused and why, not with ✓.
func TestRenderConflict(t *testing.T) {
	var b strings.Builder
	r := newRenderer(&b, io.Discard, false)
	r.event(host.Event{Type: host.EventToolEnd, Call: &host.Call{Tool: "write_file", Outcome: host.OutcomeConflict,
		Output: "wrote 5 bytes to a.txt\n\nThese changes did not reach the workspace, because it changed under them; read the files again before retrying:\n- a.txt: changed outside the agent"}})
	r.event(host.Event{Type: host.EventToolEnd, Call: &host.Call{Tool: "read_file", Outcome: host.OutcomeOK, Output: "alpha"}})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "  ✗ write_file") || !strings.Contains(lines[0], "refused: a.txt: changed outside the agent") ||
		!strings.HasPrefix(lines[1], "  ✓ read_file") {
		t.Fatalf("rendered:\n%s", b.String())
	}
}

// Regression: a resume that went on with a delegation in flight printed
// "no round was interrupted"; the JSON event had it among Resumed.
func TestRenderResumedDelegation(t *testing.T) {
	var b strings.Builder
	r := newRenderer(&b, io.Discard, false)
	r.event(host.Event{Type: host.EventAgentResumed, Strategy: "seal", Round: 1, Resumed: []string{"call_1_0"}})
	if out := b.String(); strings.Contains(out, "no round was interrupted") || !strings.Contains(out, "resumed call_1_0") {
		t.Fatalf("rendered:\n%s", out)
	}
}

// Regression: a tree stopped by a sub-agent's call awaiting approval read
// "agent lead is sub-agent beta ... stopped: ...; decide with `cairn
// approve lead CALL`", which fails: the call is the sub-agent's. The
// message now gives the sub-agent's reason alone.
func TestAwaitingOnASubAgent(t *testing.T) {
	reason := "sub-agent beta (agent lead.beta-1) stopped: awaiting approval of call_1_0 (write_file); decide with `cairn approve lead.beta-1 CALL` or `cairn deny lead.beta-1 CALL`, then `cairn resume lead`"
	err := statusError(&host.Result{Agent: "lead", Status: host.StatusAwaitingApproval, Reason: reason})
	if msg := err.Error(); strings.Contains(msg, "cairn approve lead CALL") || strings.Contains(msg, "is sub-agent") || !strings.Contains(msg, reason) {
		t.Fatalf("message: %s", msg)
	}
	err = statusError(&host.Result{Agent: "a", Status: host.StatusAwaitingApproval, Reason: "awaiting approval of call_1_0 (write_file), call_1_1 (write_file)",
		Awaiting: []string{"call_1_0", "call_1_1"}})
	if !strings.Contains(err.Error(), "cairn approve a CALL") {
		t.Fatalf("an agent's own calls: %s", err)
	}
	err = statusError(&host.Result{Agent: "a", Status: host.StatusAwaitingApproval, Reason: "awaiting approval of call_1_0 (write_file)",
		Awaiting: []string{"call_1_0"}})
	if !strings.Contains(err.Error(), "cairn approve a call_1_0") {
		t.Fatalf("an agent's own call: %s", err)
	}
}

// Regression: resume --strategy manual, which changes nothing, reported
// the calls in flight as "sealed"; it says they would be, and seal says
// they are.
func TestManualResumeSealsNothing(t *testing.T) {
	for strategy, want := range map[host.Strategy]string{
		host.StrategyManual: "  in flight, would be sealed: call_2_0 spin: was executing",
		host.StrategySeal:   "  sealed  call_2_0 spin: was executing",
	} {
		var out strings.Builder
		newRenderer(&out, io.Discard, false).event(host.Event{Type: host.EventAgentResumed, Strategy: string(strategy), Round: 1,
			Sealed: []host.Seal{{Call: "call_2_0", Tool: "spin", Phase: "executing", Effects: "none"}}})
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: %q, want a line %q", strategy, out.String(), want)
		}
	}
}

// Regression: resume --strategy manual of a parent stopped while its
// delegations ran reported them "resumed", each sub-agent going on from
// its last round, though manual runs nothing; it says they would be, and
// seal says they are.
func TestManualResumeResumesNoDelegation(t *testing.T) {
	for strategy, want := range map[host.Strategy]string{
		host.StrategyManual: "  in flight, would be resumed: call_1_0: its tool would keep what it had done (a sub-agent would go on from its last round)",
		host.StrategySeal:   "  resumed call_1_0: its tool keeps what it had done (a sub-agent goes on from its last round)",
	} {
		var out strings.Builder
		newRenderer(&out, io.Discard, false).event(host.Event{Type: host.EventAgentResumed, Strategy: string(strategy), Round: 0,
			Resumed: []string{"call_1_0"}})
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: %q, want a line %q", strategy, out.String(), want)
		}
	}
}

// A sub-agent's resume, in a tree's output, says what became of each of
// its calls, as the top agent's does; it once said only where it resumed.
func TestRenderSubAgentResumeDetails(t *testing.T) {
	var b strings.Builder
	r := newRenderer(&b, io.Discard, false)
	r.treeEvent(host.Event{Type: host.EventAgentResumed, Agent: "lead.beta-1", Depth: 1, Strategy: "seal", Round: 2,
		Finished: []string{"call_3_0"}, Sealed: []host.Seal{{Call: "call_3_1", Tool: "spin", Phase: "executing", Effects: "none", Recommendation: "retry"}}})
	out := b.String()
	if !strings.Contains(out, "lead.beta-1 resumes from the boundary after round 2") || !strings.Contains(out, "kept    call_3_0") ||
		!strings.Contains(out, "sealed  call_3_1 spin: was executing, effects none; retry") {
		t.Fatalf("rendered:\n%s", out)
	}
}
