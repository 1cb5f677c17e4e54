package workflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: `cairn workflow resume --retry STEP` of a step whose agent's
// stored state was gone made the agent anew, but the sub-agents the
// earlier agent had made were still in the store, at the ids the new
// agent's delegations take (the parent's id and the call's): the new
// agent's delegation took the earlier sub-agent's answer for its own,
// and the sub-agent did not run, though the step was said to be made
// anew; a new run under the id met them the same way. The retry, and
// the run, are refused before anything changes, naming the sub-agents to
// take out of the store; once they are out, the retry makes the step
// anew, its sub-agents too.
func TestRetryOfAGoneStepRefusesItsEarlierSubAgents(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)) }
	write("kid.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: kid.txt, content: kid was here}}]\n  - text: kid done\n")
	write("lead-script.yaml", "turns:\n  - tool_calls: [{name: delegate, input: {agent: kid, task: write}}]\n"+
		"  - tool_calls: [{name: read_file, input: {path: kid.txt}}]\n  - text: lead done\n")
	write("lead.yaml", "name: lead\nmodel: {provider: script, script: lead-script.yaml}\ntools: [{module: builtin, only: [write_file, read_file]}]\n"+
		"approvals: [{tool: read_file, action: ask}]\n"+
		"agents:\n  - name: kid\n    description: writes\n    model: {provider: script, script: kid.yaml}\n    tools: [{module: builtin, only: [write_file]}]\n")
	write("flow.yaml", "name: f\nworkspace: .\nsteps:\n  - {name: lead, agent: lead.yaml, prompt: go}\n")
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	storeDir := t.TempDir()
	store, err := checkpoint.OpenFileStore(storeDir)
	must(t, err)
	eng := engine(t, store)
	ctx := context.Background()
	res, err := workflow.Run(ctx, eng, f, workflow.Options{ID: "wr"})
	must(t, err)
	kid := "wr.lead.kid-"
	subs, err := host.Children(ctx, store, "wr.lead")
	must(t, err)
	if res.Status != checkpoint.StatusApproval || len(subs) != 1 || !strings.HasPrefix(subs[0].ID, kid) {
		t.Fatalf("run: %s (%s), sub-agents %v; want the lead's read awaiting approval after its kid answered", res.Status, res.Reason, subs)
	}
	kid = subs[0].ID
	must(t, os.Rename(filepath.Join(storeDir, "agents", "wr.lead"), filepath.Join(t.TempDir(), "lead")))
	before, err := os.ReadFile(filepath.Join(storeDir, "workflows", "wr.cbor"))
	must(t, err)

	_, err = workflow.Resume(ctx, eng, "wr", workflow.Options{Retry: []string{"lead"}, AutoDeny: true})
	if err == nil || !errors.Is(err, checkpoint.ErrExists) || !strings.Contains(err.Error(), kid) {
		t.Fatalf("retry with the earlier sub-agent in the store: %v; want it refused, naming %s", err, kid)
	}
	if after, _ := os.ReadFile(filepath.Join(storeDir, "workflows", "wr.cbor")); string(after) != string(before) || store.Exists("wr.lead") {
		t.Fatal("the refused retry changed the workflow's record or made its step's agent")
	}
	// A new run under the id, its record moved aside, is refused the same
	// way: its step's agent would be made anew beside them.
	record := filepath.Join(storeDir, "workflows", "wr.cbor")
	must(t, os.Rename(record, record+".aside"))
	if _, err := workflow.Run(ctx, eng, f, workflow.Options{ID: "wr"}); err == nil || !errors.Is(err, checkpoint.ErrExists) || !strings.Contains(err.Error(), kid) {
		t.Fatalf("a new run beside the earlier sub-agent: %v; want it refused, naming %s", err, kid)
	}
	must(t, os.Rename(record+".aside", record))
	// As the refusal says: take it out, and the retry makes the step anew.
	must(t, os.Rename(filepath.Join(storeDir, "agents", kid), filepath.Join(t.TempDir(), "kid")))
	must(t, os.Remove(filepath.Join(dir, "kid.txt")))
	res, err = workflow.Resume(ctx, eng, "wr", workflow.Options{Retry: []string{"lead"}, AutoDeny: true})
	must(t, err)
	if res.Status != checkpoint.StatusDone {
		t.Fatalf("retry once the earlier sub-agent is out: %s (%s)", res.Status, res.Reason)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "kid.txt")); err != nil || string(b) != "kid was here" {
		t.Fatalf("kid.txt: %q, %v; want the step's sub-agent made anew to have written it", b, err)
	}
}
