package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/sandbox"
)

const idleAgent = `
name: idle
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}, {module: stats.wasm, grant: {workspace: ro}}]
approvals:
  - {tool: write_file, action: ask}
`

const idleScript = `
turns:
  - tool_calls: [{name: text_stats, input: {path: notes.md, top: 2}}]
  - tool_calls: [{name: write_file, input: {path: out.txt, content: hello}}]
  - tool_calls: [{name: text_stats, input: {path: notes.md, top: 2}}]
  - text: finished
`

// An agent waiting at an approval prompt has let go of its tools' spares,
// snapshots and compiled code (the compile cache holds the code), and the
// call after the decision loads them again and answers as the one before.
func TestWaitForApprovalReleasesModules(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, idleAgent, idleScript)
	withTextStats(t, af, "one two two three three three\n")
	var atPrompt sandbox.Kept
	approve := func(ctx context.Context, req ApprovalRequest) (Decision, error) {
		atPrompt = keptOnceTrimmed(ctx, eng.rt)
		return Decision{Approved: true}, nil
	}
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "idle", Prompt: "go", Approver: approve})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusDone {
		t.Fatalf("run: %s (%s), want done", res.Status, res.Reason)
	}
	if atPrompt != (sandbox.Kept{}) {
		t.Fatalf("at the approval prompt the runtime kept %+v, want nothing", atPrompt)
	}
	before, after := resultOfAgent(t, store, "idle", "call_1_0"), resultOfAgent(t, store, "idle", "call_3_0")
	if before.IsError || after.IsError || after.Text != before.Text {
		t.Fatalf("text_stats after the prompt answered %q (error %v), before it %q (error %v)", after.Text, after.IsError, before.Text, before.IsError)
	}
	if k := eng.rt.Kept(); k.Compiled == 0 || k.Snapshots == 0 {
		t.Fatalf("after the call that followed the prompt the runtime kept %+v, want the module loaded again", k)
	}
}

// A decision made at once (a policy, a person at the screen) lets go of
// nothing: the process trims only once a wait has lasted idleAfter.
func TestQuickDecisionKeepsModules(t *testing.T) {
	eng, _ := fileEngine(t)
	// No call of text_stats after the decision loads it again.
	af := agentIn(t, idleAgent, strings.Replace(idleScript, "  - tool_calls: [{name: text_stats, input: {path: notes.md, top: 2}}]\n  - text", "  - text", 1))
	withTextStats(t, af, "one two two three three three\n")
	var atPrompt sandbox.Kept
	approve := func(ctx context.Context, req ApprovalRequest) (Decision, error) {
		atPrompt = eng.rt.Kept()
		return Decision{Approved: true}, nil
	}
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "quick", Prompt: "go", Approver: approve}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * idleAfter) // a trim the wait started would have run by now
	if k := eng.rt.Kept(); k.Compiled < atPrompt.Compiled || k.Snapshots < atPrompt.Snapshots || atPrompt.Compiled < 2 {
		t.Fatalf("after a decision made at once the runtime kept %+v (at the prompt %+v), want the modules loaded", k, atPrompt)
	}
}

// withTextStats puts the example's textstats module beside af, as
// stats.wasm, and notes (a file for it to count) in af's workspace.
func withTextStats(t *testing.T, af *AgentFile, notes string) {
	t.Helper()
	stats, err := os.ReadFile(filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"stats.wasm": stats, "workspace/notes.md": []byte(notes)} {
		if err := os.WriteFile(af.resolve(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// keptOnceTrimmed waits for the trim a run starts as it asks a person
// (see run.idle), which runs beside the prompt, and returns what the
// runtime keeps then; what it keeps after a minute otherwise.
func keptOnceTrimmed(ctx context.Context, rt *sandbox.Runtime) sandbox.Kept {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		k := rt.Kept()
		if k == (sandbox.Kept{}) || ctx.Err() != nil {
			return k
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// resultOfAgent is the result message of a call of agent id.
func resultOfAgent(t *testing.T, store checkpoint.Store, id, call string) conversation.Message {
	t.Helper()
	rec, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rec.State.Messages {
		if m.CallID == call {
			return m
		}
	}
	t.Fatalf("no result for %s", call)
	return conversation.Message{}
}

// Idle lets go of what the engine keeps between runs, and the next run's
// calls load it again and answer as the first run's did.
func TestIdleBetweenRuns(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, "name: idle\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}, {module: stats.wasm, grant: {workspace: ro}}]\n",
		"turns:\n  - tool_calls: [{name: text_stats, input: {path: notes.md, top: 2}}]\n  - text: finished\n")
	withTextStats(t, af, "one two two\n")
	for _, id := range []string{"first", "second"} {
		if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: id, Prompt: "go"}); err != nil {
			t.Fatal(err)
		}
		eng.Idle()
		if k := keptOnceTrimmed(context.Background(), eng.rt); k != (sandbox.Kept{}) {
			t.Fatalf("after Idle the runtime kept %+v, want nothing", k)
		}
	}
	first, second := resultOfAgent(t, store, "first", "call_1_0"), resultOfAgent(t, store, "second", "call_1_0")
	if first.IsError || second.IsError || first.Text != second.Text {
		t.Fatalf("text_stats after Idle answered %q (error %v), before it %q (error %v)", second.Text, second.IsError, first.Text, first.IsError)
	}
}

// A trim declined because a call or the work after one ended less than
// idleAfter ago (as the last call's next instance, made in the background,
// may end just after the wait began) is tried again while the wait lasts,
// and so is one after a trim (a module may finish loading after it); none
// once the wait is over.
func TestIdleTriesAgainWhileWaiting(t *testing.T) {
	tries := make(chan bool, 8)
	var n atomic.Int32
	r := &run{trimIdle: func(time.Duration) bool {
		trimmed := n.Add(1) == 2
		tries <- trimmed
		return trimmed
	}}
	done := r.idle()
	for try := 1; try <= 3; try++ {
		select {
		case trimmed := <-tries:
			if trimmed != (try == 2) {
				t.Fatalf("try %d trimmed: %v", try, trimmed)
			}
		case <-time.After(10 * idleAfter):
			t.Fatalf("no try %d of the trim within %s", try, 10*idleAfter)
		}
	}
	done()
	time.Sleep(idleAfter * 3 / 2)
	if len(tries) > 1 { // one may have begun as the wait ended
		t.Fatalf("tried to trim %d times after the wait was over", len(tries))
	}
}
