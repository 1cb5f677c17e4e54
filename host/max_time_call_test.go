package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// spinAgent has a tool whose guest never ends, stopped only by a sandbox
// timeout far longer than the agent's max_time, and todo_write, carried
// out by cairn at once whatever the time.
const spinAgent = `
name: spinner
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [spin], grant: {workspace: ro}}]
todos: true
sandbox: {timeout: 30s}
limits: {max_time: 100ms}
`

// Regression: max_time did not end a tool call in flight: a guest that
// looped ran on to its sandbox timeout after the run's max_time had run
// out, and the round then committed its "ran past its time limit"
// result. Now max_time ends the call as a stop does: the run pauses, its
// reason naming max_time, the call and --max-time, the call left in
// flight in the journal (executing, no result) and the call beside it
// that finished kept. A resume with --max-time seals the call, as
// executing and having changed nothing, keeps the finished call without
// running it again, and the run ends done.
func TestMaxTimeEndsAToolCallInFlight(t *testing.T) {
	af := agentIn(t, spinAgent, `
turns:
  - tool_calls:
      - {name: todo_write, input: {todos: [{content: spin, status: in_progress}]}}
      - {name: spin, input: {}}
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "s", Prompt: "go"})
	must(t, err)
	if res.Status != StatusPaused || res.Rounds != 0 || !strings.Contains(res.Reason, "reached max_time (100ms in this run)") ||
		!strings.Contains(res.Reason, "--max-time") || !strings.Contains(res.Reason, "call_1_1 (spin)") {
		t.Fatalf("run: %+v; want paused in round 1 by max_time, naming the call it stopped and --max-time", res)
	}
	rec, err := store.Read("s")
	must(t, err)
	if !rec.Interrupted() {
		t.Fatal("round 1 was committed; want it left in flight, for resume to seal the call max_time stopped")
	}
	for _, r := range rec.Tail {
		if r.Type == checkpoint.RecResult && r.Call == "call_1_1" {
			t.Fatalf("the stopped call has a result in the journal: %+v", r.Result)
		}
	}
	res, events := resumeWith(t, eng, ResumeOptions{ID: "s", Limits: RunLimits{MaxTime: Duration(time.Hour)}})
	if res.Status != StatusDone || res.Rounds != 2 || res.Text != "done" {
		t.Fatalf("resume with --max-time: %+v", res)
	}
	ar := eventOf(events, EventAgentResumed)
	if ar == nil || len(ar.Finished) != 1 || ar.Finished[0] != "call_1_0" || len(ar.Sealed) != 1 ||
		ar.Sealed[0].Call != "call_1_1" || ar.Sealed[0].Phase != checkpoint.PhaseExecuting || ar.Sealed[0].Effects != EffectsNone {
		t.Fatalf("agent_resumed %+v; want call_1_0 kept and call_1_1 sealed as executing, changing nothing", ar)
	}
	for _, e := range events {
		if e.Type == EventToolStart {
			t.Errorf("resume started %s again", e.Call.ID)
		}
	}
	if m := toolMessages(t, store, "s")["call_1_1"]; !m.IsError || !strings.HasPrefix(m.Text, sealPrefix) {
		t.Fatalf("the model reads %+v for the stopped call; want its seal", m)
	}
	if in, err := Inspect(t.Context(), store, "s"); err != nil || len(in.State.Todos) != 1 || in.State.Todos[0].Text != "spin" {
		t.Fatalf("task list %+v, %v; want the kept call's", in.State.Todos, err)
	}
}

// resumeWith resumes as opts say and returns the result and its events.
func resumeWith(t *testing.T, eng *Engine, opts ResumeOptions) (*Result, []Event) {
	t.Helper()
	var events []Event
	opts.OnEvent = func(e Event) { events = append(events, e) }
	res, err := eng.Resume(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

// A tree's max_time ends a sub-agent's tool call in flight as the
// agent's own does, the delegation itself left to its child: under a lead
// whose max_time is 100ms, kid's spin is ended, kid pauses at its
// boundary saying whose max_time it was, and the lead pauses with it, its
// delegation in flight. A resume of the lead with --max-time resumes kid,
// which seals its spin and answers, and the tree ends done.
func TestTreeMaxTimeEndsASubAgentsToolCall(t *testing.T) {
	af := agentIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [spin]}]
sandbox: {timeout: 30s}
limits: {max_time: 100ms}
agents:
  - name: kid
    description: spins
    model: {provider: script, script: kid.yaml}
    tools: [{module: hostile.wasm, only: [spin]}]
`, "turns:\n  - tool_calls: [{name: delegate, input: {agent: kid, task: spin}}]\n  - text: lead done\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	must(t, os.WriteFile(filepath.Join(af.Dir, "kid.yaml"), []byte("turns:\n  - tool_calls: [{name: spin, input: {}}]\n  - text: spun\n"), 0o644))
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	kid := childID("lead", "kid", "call_1_0")
	if res.Status != StatusPaused || !strings.Contains(res.Reason, "the tree of lead reached max_time") ||
		!strings.Contains(res.Reason, "call_1_0 (spin)") || !strings.Contains(res.Reason, "--max-time") {
		t.Fatalf("lead: %+v; want paused by its max_time, naming kid's call it stopped and --max-time", res)
	}
	for _, id := range []string{"lead", kid} {
		rec, err := store.Read(id)
		must(t, err)
		if rec.State.Status != checkpoint.StatusPaused || !rec.Interrupted() {
			t.Fatalf("%s: %s, interrupted %v; want paused with its round in flight", id, rec.State.Status, rec.Interrupted())
		}
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead", Limits: RunLimits{MaxTime: Duration(time.Hour)}})
	if err != nil || res.Status != StatusDone || res.Text != "lead done" {
		t.Fatalf("resume of lead with --max-time: %+v, %v", res, err)
	}
	if m := toolMessages(t, store, kid)["call_1_0"]; !m.IsError || !strings.HasPrefix(m.Text, sealPrefix) || !strings.Contains(m.Text, "max_time") {
		t.Fatalf("kid's model reads %+v for its stopped call; want its seal, naming max_time", m)
	}
	if m := toolMessages(t, store, "lead")["call_1_0"]; m.IsError || m.Text != "spun" {
		t.Fatalf("lead's model reads %+v for its delegation; want kid's answer", m)
	}
}

// Regression: the seal of a call that max_time ended told the model only
// that "cairn stopped" it, as after a crash or a Ctrl-C, so the model
// could not tell that the call had run out of the run's time. Now the run
// journals, for each call max_time ends in flight, what ended it (an
// executing phase whose Stopped is max_time), and the resume's seal, the
// tool message the model reads, names max_time and says the call may
// have done part of its work; the agent_resumed event says it too.
func TestSealOfACallMaxTimeStoppedNamesMaxTime(t *testing.T) {
	af := agentIn(t, spinAgent, "turns:\n  - tool_calls: [{name: spin, input: {}}]\n  - text: done\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "s", Prompt: "go"})
	must(t, err)
	if res.Status != StatusPaused || !strings.Contains(res.Reason, "call_1_0 (spin)") {
		t.Fatalf("run: %+v; want paused by max_time, naming the call it stopped", res)
	}
	rec, err := store.Read("s")
	must(t, err)
	marked := false
	for _, r := range rec.Tail {
		marked = marked || r.Type == checkpoint.RecPhase && r.Call == "call_1_0" && r.Stopped == checkpoint.StoppedMaxTime
	}
	if !marked {
		t.Fatalf("the journal does not say max_time stopped call_1_0: %+v", rec.Tail)
	}
	_, events := resumeWith(t, eng, ResumeOptions{ID: "s", Limits: RunLimits{MaxTime: Duration(time.Hour)}})
	if ar := eventOf(events, EventAgentResumed); ar == nil || len(ar.Sealed) != 1 || ar.Sealed[0].StoppedBy != checkpoint.StoppedMaxTime {
		t.Fatalf("agent_resumed %+v; want call_1_0 sealed as stopped by max_time", ar)
	}
	m := toolMessages(t, store, "s")["call_1_0"]
	if !m.IsError || !strings.HasPrefix(m.Text, sealPrefix) || !strings.Contains(m.Text, "max_time") ||
		strings.Contains(m.Text, "cairn stopped") || !strings.Contains(m.Text, "may have done part of its work") {
		t.Fatalf("the model reads %q for the call max_time stopped; want its seal naming max_time", m.Text)
	}
}
