package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/host/model"
)

const resumeScript = `
turns:
  - tool_calls: [{name: echo, input: {text: one, n: 1}}]
  - tool_calls: [{name: echo, input: {text: two, n: 2}}, {name: echo, input: {text: three, n: 3}}]
  - text: all done
`

// interrupted makes an agent that committed round 1 and then stopped during
// round 2: its turn journaled, call_2_0 executing, call_2_1 finished. That
// is what a kill -9 at that moment leaves.
func interrupted(t *testing.T) (*Engine, checkpoint.Store, string) {
	return afterRound1(t, resumeScript, "crashed", func(log checkpoint.Log) error {
		turn := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
			{ID: "call_2_0", Name: "echo", Input: `{"text":"two","n":2}`},
			{ID: "call_2_1", Name: "echo", Input: `{"text":"three","n":3}`}}}
		return log.Append(
			checkpoint.Record{Type: checkpoint.RecRunStarted, Run: &checkpoint.RunInfo{ID: "run-crashed"}},
			checkpoint.Record{Type: checkpoint.RecTurn, Round: 2, Message: &turn},
			checkpoint.Record{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_0", Tool: "echo", Phase: checkpoint.PhaseExecuting},
			checkpoint.Record{Type: checkpoint.RecPhase, Round: 2, Call: "call_2_1", Tool: "echo", Phase: checkpoint.PhaseExecuting},
			checkpoint.Record{Type: checkpoint.RecResult, Round: 2, Call: "call_2_1", Tool: "echo", Result: &checkpoint.Result{Output: "three x3"}})
	})
}

// afterRound1 runs the hostile agent with script through round 1 and
// pauses it; then, holding its lock as the process run, it appends to its
// journal what write appends: what a process killed during round 2 left.
func afterRound1(t *testing.T, script, run string, write func(checkpoint.Log) error) (*Engine, checkpoint.Store, string) {
	t.Helper()
	eng, store, res, err := runCancelledAt(t, script, func(e Event) bool { return e.Type == EventRoundEnd && e.Round == 1 })
	if err != nil || res.Status != StatusPaused || res.Rounds != 1 {
		t.Fatalf("setup run: %+v, %v", res, err)
	}
	lock, err := store.Lock("agent-1", checkpoint.ThisProcess(run))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	_, log, err := store.Open("agent-1")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := write(log); err != nil {
		t.Fatal(err)
	}
	return eng, store, "agent-1"
}

// runCancelledAt runs agent-1 of the hostile agent with script in a file
// store, cancelling the run's context at the first event stop matches.
func runCancelledAt(t *testing.T, script string, stop func(Event) bool) (*Engine, checkpoint.Store, *Result, error) {
	t.Helper()
	eng, store := fileEngine(t)
	af := agentIn(t, hostileAgent, script)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "agent-1", Prompt: "go", OnEvent: func(e Event) {
		if stop(e) {
			cancel()
		}
	}})
	return eng, store, res, err
}

func resume(t *testing.T, eng *Engine, id string, s Strategy) (*Result, []Event) {
	t.Helper()
	var events []Event
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: id, Strategy: s,
		OnEvent: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

func eventOf(events []Event, typ EventType) *Event {
	for i := range events {
		if events[i].Type == typ {
			return &events[i]
		}
	}
	return nil
}

func TestResumeSeal(t *testing.T) {
	eng, store, id := interrupted(t)
	res, events := resume(t, eng, id, StrategySeal)
	if res.Status != StatusDone || res.Rounds != 3 || res.Text != "all done" {
		t.Fatalf("result %+v", res)
	}
	ar := eventOf(events, EventAgentResumed)
	if ar == nil || ar.Round != 1 || len(ar.Sealed) != 1 || ar.Sealed[0].Call != "call_2_0" ||
		ar.Sealed[0].Phase != checkpoint.PhaseExecuting || ar.Sealed[0].Effects != EffectsNone ||
		len(ar.Finished) != 1 || ar.Finished[0] != "call_2_1" {
		t.Fatalf("agent_resumed %+v", ar)
	}
	if start := eventOf(events, EventRunStart); start == nil || start.ResumedFrom != "run-crashed" {
		t.Fatalf("run_start of the resumed run: %+v", start)
	}
	if eventOf(events, EventToolStart) != nil {
		t.Fatal("resume ran a call of the interrupted round again")
	}
	rec, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	var sealed, kept *conversation.Message
	for i, m := range rec.State.Messages {
		switch m.CallID {
		case "call_2_0":
			sealed = &rec.State.Messages[i]
		case "call_2_1":
			kept = &rec.State.Messages[i]
		}
	}
	if sealed == nil || !sealed.IsError || !strings.Contains(sealed.Text, "interrupted") || kept == nil || kept.Text != "three x3" {
		t.Fatalf("sealed %+v kept %+v", sealed, kept)
	}
	// The conversation is one a provider accepts: every call has one result.
	if rec.State.ToolCalls != 3 || len(rec.State.Runs) != 3 {
		t.Fatalf("tool calls %d, runs %d", rec.State.ToolCalls, len(rec.State.Runs))
	}
}

func TestResumeReplay(t *testing.T) {
	eng, _, id := interrupted(t)
	res, events := resume(t, eng, id, StrategyReplay)
	if res.Status != StatusDone || res.Rounds != 3 {
		t.Fatalf("result %+v", res)
	}
	var ran []string
	for _, e := range events {
		if e.Type == EventToolEnd {
			ran = append(ran, e.Call.ID+"="+e.Call.Output)
		}
	}
	if strings.Join(ran, ",") != "call_2_0=two x2,call_2_1=three x3" && strings.Join(ran, ",") != "call_2_1=three x3,call_2_0=two x2" {
		t.Fatalf("replay should ask the model again and run its calls: %v", ran)
	}
}

func TestResumeManualChangesNothing(t *testing.T) {
	eng, store, id := interrupted(t)
	dir := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", id)
	before := dirBytes(t, dir)
	res, events := resume(t, eng, id, StrategyManual)
	if res.Status != StatusPaused || eventOf(events, EventAgentResumed) == nil {
		t.Fatalf("result %+v", res)
	}
	if after := dirBytes(t, dir); after != before {
		t.Fatal("a manual resume changed the agent's files")
	}
	// And a seal afterwards still finds the same interrupted round.
	if _, events := resume(t, eng, id, StrategySeal); len(eventOf(events, EventAgentResumed).Sealed) != 1 {
		t.Fatal("the interrupted round was lost by the manual resume")
	}
}

// Regression: a manual resume of an agent whose journal ends in a torn
// record, with no commit mark, cut the tail off, reserved the journal's
// space again and wrote a mark, while it said nothing changed. It now only
// reads.
func TestResumeManualLeavesATornTail(t *testing.T) {
	eng, store, id := interrupted(t)
	dir := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", id)
	rec, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	journals, _ := filepath.Glob(filepath.Join(dir, "journal-*.log"))
	if len(journals) == 0 {
		t.Fatal("no journal")
	}
	if err := errors.Join(os.Remove(filepath.Join(dir, "committed")), os.Truncate(journals[len(journals)-1], rec.JournalBytes-3)); err != nil {
		t.Fatal(err)
	}
	before := dirBytes(t, dir)
	if res, _ := resume(t, eng, id, StrategyManual); res.Status != StatusPaused {
		t.Fatalf("result %+v", res)
	}
	if after := dirBytes(t, dir); after != before {
		t.Fatal("a manual resume changed the agent's files")
	}
}

// A resume of an agent whose run ended does nothing, and (regression) adds
// no lines to its history, where it added a run_end without a run.
func TestResumeOfFinishedAgentDoesNothing(t *testing.T) {
	eng, store, id := interrupted(t)
	resume(t, eng, id, StrategySeal)
	lines := func() int {
		n := 0
		must(t, ReadHistory(t.Context(), store, id, false, func(Event, []byte) error { n++; return nil }))
		return n
	}
	before := lines()
	res, events := resume(t, eng, id, StrategySeal)
	if res.Status != StatusDone || !strings.Contains(res.Reason, "nothing to resume") || eventOf(events, EventModelTurn) != nil {
		t.Fatalf("result %+v", res)
	}
	if eventOf(events, EventCheckpointLoaded) == nil || eventOf(events, EventRunEnd) == nil {
		t.Fatalf("the caller was not told: %+v", events)
	}
	if after := lines(); after != before {
		t.Fatalf("the history grew from %d to %d lines for a resume that did nothing", before, after)
	}
}

func TestResumeErrors(t *testing.T) {
	eng, store, id := interrupted(t)
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "nobody"}); !errors.Is(err, checkpoint.ErrNotFound) || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("unknown agent: %v", err)
	}
	lock, _ := store.Lock(id, checkpoint.ThisProcess("other-run"))
	_, err := eng.Resume(context.Background(), ResumeOptions{ID: id})
	lock.Unlock()
	var le *checkpoint.LockedError
	if !errors.As(err, &le) || le.Holder.Run != "other-run" || le.Holder.PID != os.Getpid() {
		t.Errorf("locked agent: %v", err)
	}
	// Running an interrupted agent again is refused until it is resumed.
	af := agentIn(t, hostileAgent, resumeScript)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: id, Prompt: "again"}); !errors.Is(err, ErrInterrupted) {
		t.Errorf("run of an interrupted agent: %v", err)
	}
}

// A finished agent given a new prompt continues its conversation.
func TestRunContinuesAnAgent(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, hostileAgent, "turns:\n  - text: first\n  - text: second\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	first, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "cont", Prompt: "one"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "cont", Prompt: "two"})
	if err != nil || first.Text != "first" || second.Text != "second" || second.Rounds != 2 {
		t.Fatalf("first %+v second %+v %v", first, second, err)
	}
	fresh, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "cont", Prompt: "one", Fresh: true})
	if err != nil || fresh.Text != "first" || fresh.Rounds != 1 {
		t.Fatalf("fresh %+v %v", fresh, err)
	}
}

func dirBytes(t *testing.T, dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		if e.Name() == "lock" {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name())
		b.Write(data)
	}
	return b.String()
}

// answeredThenKilled makes an agent whose model gave its final answer in
// round 2 and whose process was then killed: before the round committed,
// or after it committed and before the run's end was journaled. Round 1
// ran as usual; the rest is what the journal holds after such a kill.
func answeredThenKilled(t *testing.T, committed bool) (*Engine, checkpoint.Store, string) {
	script := "turns:\n  - tool_calls: [{name: echo, input: {text: one, n: 1}}]\n  - text: all done\n"
	return afterRound1(t, script, "killed", func(log checkpoint.Log) error {
		answer := conversation.Message{Role: conversation.RoleAssistant, Text: "all done"}
		err := log.Append(checkpoint.Record{Type: checkpoint.RecRunStarted, Run: &checkpoint.RunInfo{ID: "run-killed"}},
			checkpoint.Record{Type: checkpoint.RecTurn, Round: 2, Message: &answer, Usage: &conversation.Usage{OutputTokens: 2}})
		if err == nil && committed {
			_, err = log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Round: 2})
		}
		if err == nil {
			err = log.Sync()
		}
		return err
	})
}

// A run killed after the model's final answer was journaled, whether or
// not its round had committed, is done once resumed: the answer ends the
// task, and the model is not asked for another round.
func TestResumeAfterTheFinalAnswer(t *testing.T) {
	for _, committed := range []bool{false, true} {
		t.Run(fmt.Sprintf("committed=%v", committed), func(t *testing.T) {
			eng, store, id := answeredThenKilled(t, committed)
			res, events := resume(t, eng, id, StrategySeal)
			if res.Status != StatusDone || res.Rounds != 2 || res.Text != "all done" {
				t.Fatalf("resumed run ended %+v; want done after 2 rounds with the answer", res)
			}
			if turn := eventOf(events, EventModelTurn); turn != nil {
				t.Fatalf("resume asked the model again: %+v", turn)
			}
			if end := eventOf(events, EventRunEnd); end == nil || end.Round != 2 || end.Status != StatusDone {
				t.Fatalf("run_end %+v", end)
			}
			rec, err := store.Read(id)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Interrupted() || rec.State.Status != checkpoint.StatusDone || rec.State.Round != 2 || rec.State.TaskRounds != 2 {
				t.Fatalf("stored state: round %d, task rounds %d, status %s, interrupted %v",
					rec.State.Round, rec.State.TaskRounds, rec.State.Status, rec.Interrupted())
			}
			if _, events := resume(t, eng, id, StrategySeal); eventOf(events, EventModelTurn) != nil {
				t.Fatal("a second resume asked the model again")
			}
		})
	}
}

// A run whose context ends just after the final answer's round committed
// is done, not paused: its answer is in the store, and a resume would have
// nothing left to ask.
func TestAnswerCommittedAsTheContextEnds(t *testing.T) {
	script := "turns:\n  - tool_calls: [{name: echo, input: {text: one, n: 1}}]\n  - text: all done\n"
	_, store, res, err := runCancelledAt(t, script, func(e Event) bool { return e.Type == EventCheckpointSaved && e.Round == 2 })
	if err != nil || res.Status != StatusDone || res.Rounds != 2 || res.Text != "all done" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if rec, err := store.Read("agent-1"); err != nil || rec.Interrupted() || rec.State.Status != checkpoint.StatusDone {
		t.Fatalf("stored: %+v, %v", rec, err)
	}
}

// Regression: a new prompt to an agent whose model had failed mid-round
// was refused with "stopped during round 1", the words for a process that
// died; the user could not tell that the run had ended with the model's
// error. The refusal names how the last run ended and its reason.
func TestRunRefusalSaysHowTheOpenRoundEnded(t *testing.T) {
	eng, _ := fileEngine(t)
	eng.wrapModel = func(model.Provider) model.Provider {
		return providerFunc(func(context.Context, model.Request) (model.Response, error) {
			return model.Response{}, fmt.Errorf("%w: HTTP 401: bad key", model.ErrRequest)
		})
	}
	af := agentIn(t, hostileAgent, "turns:\n  - text: never\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "failing", Prompt: "first"})
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	_, err = eng.Run(context.Background(), RunOptions{ID: "failing", Prompt: "second"})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("second prompt: %v, want ErrInterrupted", err)
	}
	for _, s := range []string{"ended its last run during round 1", "failed", "HTTP 401: bad key", "cairn resume failing"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q does not say %q", err, s)
		}
	}
	if strings.Contains(err.Error(), "stopped during") {
		t.Errorf("refusal %q speaks of a process that stopped", err)
	}
}
