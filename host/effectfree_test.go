package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// isAppended reports whether a record that match matches reached the
// journal, synced or not.
func (s *watchedStore) isAppended(match func(checkpoint.Record) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.durable, match) || slices.ContainsFunc(s.unsaved, match)
}

// A turn of effect-free calls (read_file: the workspace read-only, no
// network) journals them as executing before they run, without a sync of
// its own: the commit's sync makes them durable. A turn with a call that
// may change the workspace still syncs them before any runs. Each call's
// result is durable before its tool_end either way.
func TestEffectFreeTurnStartsWithoutItsOwnSync(t *testing.T) {
	af := writerFile(t, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.txt}}]
  - tool_calls: [{name: append, input: {path: log.txt, line: one}}, {name: read_file, input: {path: log.txt}}]
  - tool_calls: [{name: read_file, input: {path: log.txt}}, {name: read_file, input: {path: a.txt}}]
  - text: done
`)
	eng, store := watchedEngine(t, t.TempDir(), nil)
	var failures []string
	fail := func(s string) { failures = append(failures, s) }
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go", OnEvent: func(e Event) {
		switch e.Type {
		case EventToolStart:
			executing := isRecord(checkpoint.RecPhase, e.Call.ID, checkpoint.PhaseExecuting)
			switch {
			case !store.isAppended(executing):
				fail(e.Call.ID + " started before its executing record was written")
			case e.Round == 1 && store.isDurable(executing):
				fail(e.Call.ID + " (effect-free, alone in its turn) was synced as executing before it ran")
			case e.Round == 2 && !store.isDurable(executing):
				fail(e.Call.ID + " (its turn has an append) started before its executing record was durable")
			}
		case EventToolEnd:
			if !store.isDurable(isRecord(checkpoint.RecResult, e.Call.ID, "")) {
				fail(e.Call.ID + " ended before its result was durable")
			}
		}
	}})
	if err != nil || res.Status != StatusDone || res.Rounds != 4 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "\n"))
	}
}

// A process killed after an effect-free call finished and before its
// round's commit (the executing record never synced) leaves the records in
// the journal, as the page cache keeps them: resume keeps the finished
// call, neither sealing it nor running it again.
func TestEffectFreeCallKilledBeforeCommitIsKept(t *testing.T) {
	af := writerFile(t, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.txt}}]
  - text: done
`)
	if err := os.WriteFile(filepath.Join(af.Dir, "workspace", "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var once atomic.Bool
	eng, store := watchedEngine(t, t.TempDir(), func(r checkpoint.Record) bool {
		return r.Type == checkpoint.RecCommit && r.Round == 1 && once.CompareAndSwap(false, true)
	})
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"}); err == nil {
		t.Fatal("the run went on past its cut")
	}
	if store.isDurable(isRecord(checkpoint.RecPhase, "call_1_0", checkpoint.PhaseExecuting)) {
		t.Fatal("the effect-free call's executing record was synced before the commit")
	}
	res, events := resume(t, eng, "a", StrategySeal)
	if res.Status != StatusDone || res.Rounds != 2 {
		t.Fatalf("resume: %+v", res)
	}
	ar := eventOf(events, EventAgentResumed)
	if ar == nil || !slices.Equal(ar.Finished, []string{"call_1_0"}) || len(ar.Sealed) != 0 {
		t.Fatalf("agent_resumed %+v", ar)
	}
	for _, e := range events {
		if e.Type == EventToolStart {
			t.Errorf("resume started %s again", e.Call.ID)
		}
	}
	if m := toolMessages(t, eng.Store(), "a")["call_1_0"]; m.IsError || !strings.Contains(m.Text, "alpha") {
		t.Fatalf("the model reads %+v for the kept call", m)
	}
}

// An effect-free call a person approved in this run starts only once the
// decision and its executing record are durable: a power cut must not
// make resume ask again about a call that ran.
func TestApprovedEffectFreeCallStartsSynced(t *testing.T) {
	af := agentIn(t, `
name: reader
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
approvals:
  - {tool: read_file, action: ask}
`, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.txt}}]
  - text: done
`)
	approve := func(context.Context, ApprovalRequest) (Decision, error) { return Decision{Approved: true}, nil }
	res := checkEachStart(t, af, approve, func(call string, durable func(call string, p checkpoint.Phase) bool) string {
		for _, phase := range []checkpoint.Phase{checkpoint.PhaseApproved, checkpoint.PhaseExecuting} {
			if !durable(call, phase) {
				return call + " started before its " + string(phase) + " record was durable"
			}
		}
		return ""
	})
	if res.Status != StatusDone || res.Rounds != 2 {
		t.Fatalf("run: %+v", res)
	}
}

// askListDir is an agent whose list_dir calls need a person, and whose
// one turn reads a file and lists a directory at once.
const askListDir, readAndList = `
name: reader
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file, list_dir]}]
approvals:
  - {tool: list_dir, action: ask}
`, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.txt}}, {name: list_dir, input: {path: .}}]
  - text: done
`

// A person's denial of one call of a turn is durable before the turn's
// other calls run, even when they are all effect-free: otherwise a power
// cut after they ran, before the commit, would leave the round's turn
// (synced with the approval_required record) without the decision, and
// resume would ask the person again about a call they had refused.
func TestDenialIsLostWhenTheTurnsOtherCallsAreEffectFree(t *testing.T) {
	deny := func(context.Context, ApprovalRequest) (Decision, error) { return Decision{Reason: "no"}, nil }
	res := checkEachStart(t, agentIn(t, askListDir, readAndList), deny, func(call string, durable func(call string, p checkpoint.Phase) bool) string {
		if !durable("call_1_1", checkpoint.PhaseDenied) {
			return call + " started before the denial of call_1_1 was durable"
		}
		return ""
	})
	if res.Status != StatusDone || res.Rounds != 2 {
		t.Fatalf("run: %+v", res)
	}
}

// When a call of a turn waits for a person, the turn is durable already
// (synced with its approval_required record), so the effect-free calls
// that run meanwhile are durable as executing before they run: otherwise a
// power cut would leave the turn without them, and resume would tell the
// model that a call that ran was interrupted while pending.
func TestEffectFreeCallBesideAWaitingOneIsSealedAsPending(t *testing.T) {
	res := checkEachStart(t, agentIn(t, askListDir, readAndList), nil, func(call string, durable func(call string, p checkpoint.Phase) bool) string {
		if !durable(call, checkpoint.PhaseExecuting) {
			return call + " started before its executing record was durable, its turn being durable"
		}
		return ""
	})
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
}

// checkEachStart runs af on a watched store with approve, asks check at
// each call's tool_start event (durable says whether a call's record of a
// phase is durable then), fails the test with what check said, and
// returns the run's result.
func checkEachStart(t *testing.T, af *AgentFile, approve Approver, check func(call string, durable func(call string, p checkpoint.Phase) bool) string) *Result {
	t.Helper()
	eng, store := watchedEngine(t, t.TempDir(), nil)
	durable := func(call string, p checkpoint.Phase) bool {
		return store.isDurable(isRecord(checkpoint.RecPhase, call, p))
	}
	var failures []string
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go", Approver: approve, OnEvent: func(e Event) {
		if e.Type != EventToolStart {
			return
		}
		if f := check(e.Call.ID, durable); f != "" {
			failures = append(failures, f)
		}
	}})
	if err != nil {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "\n"))
	}
	return res
}
