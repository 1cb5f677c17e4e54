package host

import (
	"context"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// orderAgent delegates three writes of one file, one at a time; the two
// of alpha need a person's approval, so in the first run beta's, the last
// of the turn, starts first.
const orderAgent = `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file, write_file]}]
max_parallel: 1
approvals: [{tool: delegate, args: {agent: alpha}, action: ask}]
agents:
  - name: alpha
    description: writes shared.txt
    model: {provider: script, script: alpha.yaml}
    tools: [{module: builtin, only: [write_file]}]
  - name: beta
    description: writes shared.txt
    model: {provider: script, script: beta.yaml}
    tools: [{module: builtin, only: [write_file]}]
`

const orderScript = `
turns:
  - tool_calls:
      - {name: delegate, input: {agent: alpha, task: one}}
      - {name: delegate, input: {agent: alpha, task: two}}
      - {name: delegate, input: {agent: beta, task: three}}
  - text: all done
`

func sharedWriter(name string) string {
	return `
turns:
  - tool_calls: [{name: write_file, input: {path: shared.txt, content: ` + name + `}}]
  - text: wrote shared.txt
`
}

// Regression: a sub-agent killed after its write finished, before the
// write was applied, lost it: resume gave the parent's one slot to a
// delegation that had not started, whose child wrote the same file
// first, and the interrupted child's apply then failed as a conflict
// ("something else created it after the call saw it") while the parent
// ended done. Resume runs the delegations that were in flight first, so
// each finishes what it had done before any other starts. (A stop here is
// a cancel, which lets the child apply its write; the order is what is
// checked.)
func TestResumeFinishesDelegationsInFlightBeforeStartingOthers(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, orderAgent, orderScript, map[string]string{"alpha.yaml": sharedWriter("alpha"), "beta.yaml": sharedWriter("beta")})
	approve := func(context.Context, ApprovalRequest) (Decision, error) { return Decision{Approved: true}, nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inFlight string
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "lead", Prompt: "go", Approver: approve, OnEvent: func(e Event) {
		if e.Type == EventToolEnd && e.Parent == "lead" && inFlight == "" {
			inFlight = e.Agent
			cancel() // the child's write finished
		}
	}})
	if err != nil || res.Status != StatusPaused || inFlight == "" {
		t.Fatalf("run: %+v, %v; want stopped with a child's write finished", res, err)
	}
	var first string // the first child the resume runs
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead", Approver: approve, OnEvent: func(e Event) {
		if e.Type == EventRunStart && e.Agent != "lead" && first == "" {
			first = e.Agent
		}
	}})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if first != inFlight {
		t.Errorf("resume ran %s first, not %s, whose write had finished", first, inFlight)
	}
	kids, err := Children(t.Context(), store, "lead")
	if err != nil || len(kids) != 3 {
		t.Fatalf("children: %+v, %v", kids, err)
	}
	for _, k := range kids {
		if rec, err := store.Read(k.ID); err != nil || rec.State.Status != checkpoint.StatusDone {
			t.Errorf("sub-agent %s: %v", k.ID, err)
		}
	}
}
