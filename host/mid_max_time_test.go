package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// midTimeTree is a lead without limits whose sub-agent mid, with a
// max_time of its own, hands a task to leaf, whose model is the server at
// %s: it asks for one list_dir, then holds its next request open.
const midTimeTree = `name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: mid
    description: hands the listing on
    model: {provider: script, script: mid.yaml}
    tools: [{module: builtin, only: [list_dir]}]
    limits: {max_time: 1s}
    agents:
      - name: leaf
        description: lists the workspace
        model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1}
        tools: [{module: builtin, only: [list_dir]}]
`

// A middle agent's max_time that runs out while the leaf below it waits
// for its model stops the leaf at its boundary (the request ended, its
// finished round kept), and tells mid and the lead, each paused with a
// reason that names mid's own limit and how to raise it. Resumed as the
// reason says (mid with --max-time, then the lead), the leaf goes on from
// its boundary, its finished call not run again, and the tree ends done.
func TestMidAgentsMaxTimeStopsTheLeafBelowIt(t *testing.T) {
	srv, _, hang := hangingOpenAI(t)
	eng, store := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(midTimeTree, srv.URL), "turns:\n  - tool_calls: [{name: delegate, input: {agent: mid, task: list it}}]\n  - text: lead done\n")
	must(t, os.WriteFile(filepath.Join(af.Dir, "mid.yaml"), []byte("turns:\n  - tool_calls: [{name: delegate, input: {agent: leaf, task: list it}}]\n  - text: mid done\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard for a hang
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	mid := childID("lead", "mid", "call_1_0")
	leaf := childID(mid, "leaf", "call_1_0")
	want := "the tree of " + mid + " reached max_time"
	if res.Status != StatusPaused || !strings.Contains(res.Reason, want) || !strings.Contains(res.Reason, "`cairn resume "+mid+"` with --max-time") ||
		!strings.HasSuffix(res.Reason, "`cairn resume lead`") {
		t.Fatalf("lead: %+v; want it paused by mid's max_time, saying to raise it on mid, then `cairn resume lead`", res)
	}
	// mid's delegating round stays in flight, its resume resuming leaf.
	m, err := store.Read(mid)
	must(t, err)
	if m.State.Status != checkpoint.StatusPaused || !m.Interrupted() {
		t.Fatalf("mid: %s, interrupted %v; want paused, its delegation in flight", m.State.Status, m.Interrupted())
	}
	l, err := store.Read(leaf)
	must(t, err)
	if l.State.Status != checkpoint.StatusPaused || l.Interrupted() {
		t.Fatalf("leaf: %s, interrupted %v; want paused at its boundary", l.State.Status, l.Interrupted())
	}
	calls := l.State.ToolCalls
	hang.Store(false)
	res, err = eng.Resume(ctx, ResumeOptions{ID: mid, Limits: RunLimits{MaxTime: Duration(time.Hour)}})
	if err != nil || res.Status != StatusDone || res.Text != "mid done" {
		t.Fatalf("resume of mid with --max-time: %+v, %v", res, err)
	}
	res, err = eng.Resume(ctx, ResumeOptions{ID: "lead"})
	if err != nil || res.Status != StatusDone || res.Text != "lead done" {
		t.Fatalf("resume of lead: %+v, %v", res, err)
	}
	l, err = store.Read(leaf)
	must(t, err)
	if l.State.Status != checkpoint.StatusDone || l.State.ToolCalls != max(calls, 1) {
		t.Fatalf("leaf: %s with %d calls; want done, its one list_dir made once (%d before the resume)", l.State.Status, l.State.ToolCalls, calls)
	}
}

// Regression: an agent's own max_time lets each of its runs commit one
// round, so a max_time shorter than starting takes does not leave it
// unable to go on; but a tree's max_time stopped an agent below it before
// its first round: under mid, with max_time 1ns, alpha was stopped before
// any round on every resume of the lead, which never got further. A
// tree's max_time stops its agents once a round of the tree has committed
// in the run, so alpha goes on by a round on each resume. Its calls are
// todo_write's, which cairn carries out at once: a call that takes longer
// than max_time is ended by it (max_time_call_test.go).
func TestTreeMaxTimeShorterThanStartingLetsTheTreeGoOn(t *testing.T) {
	eng, store := fileEngine(t)
	list := "  - tool_calls: [{name: todo_write, input: {todos: [{content: list, status: pending}]}}]\n"
	tree := strings.Replace(midTree, "limits: {max_tokens: 40}", "limits: {max_time: 1ns}", 1)
	tree = strings.Replace(tree, "again and again\n", "again and again\n        todos: true\n", 1)
	af := agentIn(t, tree,
		"turns:\n  - tool_calls: [{name: delegate, input: {agent: mid, task: list it}}]\n  - text: lead done\n")
	must(t, os.WriteFile(filepath.Join(af.Dir, "mid.yaml"), []byte("turns:\n  - tool_calls: [{name: delegate, input: {agent: alpha, task: list it}}]\n  - text: mid done\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(af.Dir, "alpha.yaml"), []byte("turns:\n"+list+list+"  - text: listed\n"), 0o644))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	alpha := childID(childID("lead", "mid", "call_1_0"), "alpha", "call_1_0")
	for n := 0; res.Status != StatusDone; n++ {
		if res.Status != StatusPaused || n == 5 {
			t.Fatalf("lead after %d resumes: %+v; want paused by mid's max_time, then done", n, res)
		}
		before := 0
		if a, err := store.Read(alpha); err == nil {
			before = a.State.Round
		}
		if res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead"}); err != nil {
			t.Fatal(err)
		}
		if a, err := store.Read(alpha); res.Status != StatusDone && (err != nil || a.State.Round <= before) {
			t.Fatalf("resume %d of lead: %+v; alpha did not go on from round %d", n+1, res, before)
		}
	}
	if res.Text != "lead done" {
		t.Fatalf("lead: %+v", res)
	}
}

// A tree's max_time that is up stops the agents that start after a round
// of the tree has committed before their first round: of a fan-out of
// six sub-agents, two at a time, under a lead whose max_time is shorter
// than starting takes, at most the two running at once commit a round in
// each run, not each of the six; and each resume goes on by a round or
// more, until the tree is done. Their calls are todo_write's, which take
// no time (see TestTreeMaxTimeShorterThanStartingLetsTheTreeGoOn).
func TestTreeMaxTimeUpStopsTheRestOfAFanOut(t *testing.T) {
	eng, store := fileEngine(t)
	const n, parallel = 6, 2
	var lead, agents strings.Builder
	lead.WriteString("turns:\n  - tool_calls:\n")
	for i := range n {
		fmt.Fprintf(&lead, "      - {name: delegate, input: {agent: c%d, task: list it}}\n", i)
		fmt.Fprintf(&agents, "  - {name: c%d, description: lists, model: {provider: script, script: c.yaml}, tools: [{module: builtin, only: [list_dir]}], todos: true}\n", i)
	}
	lead.WriteString("  - text: lead done\n")
	af := agentIn(t, fmt.Sprintf("name: lead\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n"+
		"tools: [{module: builtin, only: [list_dir]}]\nmax_parallel: %d\nlimits: {max_time: 1ns}\nagents:\n%s", parallel, agents.String()), lead.String())
	list := "  - tool_calls: [{name: todo_write, input: {todos: [{content: list, status: pending}]}}]\n"
	must(t, os.WriteFile(filepath.Join(af.Dir, "c.yaml"), []byte("turns:\n"+list+list+"  - text: listed\n"), 0o644))
	rounds := func() int {
		sum := 0
		for i := range n {
			if rec, err := store.Read(childID("lead", fmt.Sprintf("c%d", i), fmt.Sprintf("call_1_%d", i))); err == nil {
				sum += rec.State.Round
			}
		}
		return sum
	}
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if got := rounds(); res.Status != StatusPaused || got > parallel || got == 0 {
		t.Fatalf("run: %+v; the sub-agents committed %d rounds; want the lead paused by its max_time, after 1 to %d rounds of theirs", res, got, parallel)
	}
	for resumes := 1; res.Status != StatusDone; resumes++ {
		before := rounds()
		if res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead"}); err != nil || resumes > 3*n {
			t.Fatalf("resume %d: %+v, %v", resumes, res, err)
		}
		if got := rounds(); res.Status != StatusDone && (got == before || got > before+parallel) {
			t.Fatalf("resume %d: %+v; the sub-agents went from %d rounds to %d; want 1 to %d more", resumes, res, before, got, parallel)
		}
	}
	if res.Text != "lead done" {
		t.Fatalf("lead: %+v", res)
	}
}

// A sub-agent's first model request in a run that hangs is ended by its
// tree's max_time once another agent of the tree has committed a round
// (the tree's max_time counts from then on for each of its agents): under
// a lead with max_time 1s, c1's request, held open by its server, ends,
// and c1 stops at its boundary, where it would have waited for the
// server for as long as it held the request.
func TestTreeMaxTimeEndsAFirstModelRequestThatHangs(t *testing.T) {
	arrived := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	eng, store := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(`name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_time: 1s}
agents:
  - {name: c0, description: lists, model: {provider: script, script: c0.yaml}, tools: [{module: builtin, only: [list_dir]}]}
  - {name: c1, description: waits, model: {provider: openai, name: m, base_url: %s/v1, max_retries: -1}, tools: [{module: builtin, only: [list_dir]}]}
`, srv.URL), "turns:\n  - tool_calls: [{name: delegate, input: {agent: c0, task: list}}, {name: delegate, input: {agent: c1, task: wait}}]\n  - text: lead done\n")
	must(t, os.WriteFile(filepath.Join(af.Dir, "c0.yaml"), []byte("turns:\n  - tool_calls: [{name: list_dir, input: {path: .}}]\n  - text: listed\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard for a hang
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	c1 := childID("lead", "c1", "call_1_1")
	if res.Status != StatusPaused || !strings.Contains(res.Reason, c1) || !strings.Contains(res.Reason, "max_time") {
		t.Fatalf("lead: %+v; want paused by its max_time, which stopped c1", res)
	}
	if rec, err := store.Read(c1); err != nil || rec.State.Status != checkpoint.StatusPaused || rec.State.Round != 0 {
		t.Fatalf("c1: %+v, %v; want paused at its boundary, round 0", rec, err)
	}
}
