package host

import (
	"context"
	"fmt"
	"testing"
)

// Regression: a resume counted what the round it found interrupted had
// spent into the tree's budget as the tree was made, at the run's first
// delegation; when that round committed first (it asked for no
// delegation: its call awaited approval) and a later round delegated, the
// state held that spend already and the tree counted it twice, so a
// child stopped on a budget its tree had not used ("the tree of lead
// reached max_tokens"), saying more tokens were used than were.
func TestTreeCountsAResumedRoundsSpendOnce(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, fmt.Sprintf(`
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
limits: {max_tokens: %d} # the resume lowers it
approvals: [{tool: write_file, action: ask}]
agents:
  - name: kid
    description: counts
    model: {provider: script, script: kid.yaml}
    tools: [{module: builtin, only: [write_file]}]
    approvals: []
`, 100000), `
turns:
  - tool_calls: [{name: write_file, input: {path: plan.txt, content: "a plan, long enough to cost a few tokens of the tree's budget"}}]
  - tool_calls: [{name: delegate, input: {agent: kid, task: count}}]
  - text: parent done
`, map[string]string{"kid.yaml": "turns:\n  - text: kid done\n"})
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	must(t, eng.Decide(context.Background(), "lead", "call_1_0", Decision{Approved: true}))
	// The budget the tree has left for the kid: the tree's total when it
	// starts is lead's round 1, once.
	rec, err := store.Read("lead")
	must(t, err)
	turn1 := tailSpend(rec.Tail).Total()
	if turn1 == 0 {
		t.Fatal("round 1's turn cost nothing: the test needs it to")
	}
	// The budget, three times round 1's turn, leaves the kid room after
	// round 1 and round 2's turn (a little more than round 1's, which
	// counts as it is answered); round 1 counted twice, it leaves none.
	var seen []string
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead", Limits: RunLimits{MaxTokens: 3 * turn1},
		OnEvent: func(e Event) {
			if e.Type == EventRunEnd {
				seen = append(seen, e.Agent+": "+string(e.Status)+" "+e.Reason)
			}
		}})
	must(t, err)
	if res.Status != StatusDone && res.Status != StatusPaused {
		t.Fatalf("resume: %+v", res)
	}
	kid, err := store.Read(childID("lead", "kid", "call_2_0"))
	if err != nil || kid.State.Round == 0 {
		t.Fatalf("the kid ran no round (%v) under a budget of %d, where lead's round 1 cost %d; the ends: %q", err, 3*turn1, turn1, seen)
	}
}

// Regression: a resume that replays the round it found interrupted
// commits that round's spend (its abort) and still counted it in the
// run's count of the interrupted round's spend, so a tree made when the
// replayed turn delegated counted it twice and stopped the sub-agent on
// a budget the tree had not used.
func TestTreeCountsAReplayedRoundsSpendOnce(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
approvals: [{tool: delegate, action: ask}]
agents:
  - name: kid
    description: counts
    model: {provider: script, script: kid.yaml}
    tools: [{module: builtin, only: [write_file]}]
    approvals: []
`, `
turns:
  - tool_calls: [{name: delegate, input: {agent: kid, task: "count the lines of the plan, and say how many there are"}}]
  - text: parent done
`, map[string]string{"kid.yaml": "turns:\n  - text: kid done\n"})
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	rec, err := store.Read("lead")
	must(t, err)
	turn1 := tailSpend(rec.Tail).Total()
	if turn1 == 0 {
		t.Fatal("round 1's turn cost nothing: the test needs it to")
	}
	approve := func(context.Context, ApprovalRequest) (Decision, error) { return Decision{Approved: true}, nil }
	// The budget, three times the dropped turn, leaves the kid room after
	// the dropped turn and the replayed one (about as much, counted as
	// it is answered); the dropped turn counted twice, it leaves none.
	var seen []string
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead", Strategy: StrategyReplay, Approver: approve,
		Limits: RunLimits{MaxTokens: 3 * turn1},
		OnEvent: func(e Event) {
			if e.Type == EventRunEnd {
				seen = append(seen, e.Agent+": "+string(e.Status)+" "+e.Reason)
			}
		}})
	must(t, err)
	if res.Status != StatusDone && res.Status != StatusPaused {
		t.Fatalf("resume: %+v; the ends: %q", res, seen)
	}
	kid, err := store.Read(childID("lead", "kid", "call_1_0"))
	if err != nil || kid.State.Round == 0 {
		t.Fatalf("the kid ran no round (%v) under a budget of %d, where the dropped turn cost %d; the ends: %q", err, 3*turn1, turn1, seen)
	}
}
