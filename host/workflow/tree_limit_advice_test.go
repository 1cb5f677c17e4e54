package workflow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a sub-agent under a step that its tree's budget stopped
// paused the workflow saying to "resume W.lead with --max-tokens", the
// resume of the step's agent alone, which leaves the step unrecorded,
// where the workflow's own resume takes the flag and goes on. The reason
// names `cairn workflow resume` with the flag.
func TestStepTreeLimitSaysToResumeTheWorkflowWithTheFlag(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)) }
	write("kid.yaml", "turns:\n"+strings.Repeat("  - tool_calls: [{name: write_file, input: {path: kid.txt, content: a line the kid writes}}]\n", 4)+"  - text: kid done\n")
	write("lead-script.yaml", "turns:\n  - tool_calls: [{name: delegate, input: {agent: kid, task: write}}]\n  - text: lead done\n")
	write("lead.yaml", "name: lead\nmodel: {provider: script, script: lead-script.yaml}\ntools: [{module: builtin, only: [write_file]}]\n"+
		"limits: {max_tokens: 60}\n"+
		"agents:\n  - name: kid\n    description: writes\n    model: {provider: script, script: kid.yaml}\n    tools: [{module: builtin, only: [write_file]}]\n")
	write("flow.yaml", "name: f\nworkspace: .\nsteps:\n  - {name: lead, agent: lead.yaml, prompt: go}\n")
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	store, err := checkpoint.OpenFileStore(t.TempDir())
	must(t, err)
	eng := engine(t, store)
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wt"})
	must(t, err)
	if res.Status != checkpoint.StatusPaused || !strings.Contains(res.Reason, "the tree of wt.lead reached max_tokens") {
		t.Fatalf("run: %s (%s); want it paused by the tree's budget", res.Status, res.Reason)
	}
	if strings.Contains(res.Reason, "resume wt.lead with") || !strings.Contains(res.Reason, "resume the workflow with --max-tokens to allow more (`cairn workflow resume wt` with that flag)") ||
		strings.Contains(res.Reason, "`cairn workflow resume wt` resumes it") {
		t.Errorf("the reason: %s\nwant it to say to resume the workflow with --max-tokens, not the step's agent", res.Reason)
	}
	res, err = workflow.Resume(context.Background(), eng, "wt", workflow.Options{Limits: host.RunLimits{MaxTokens: 100000}})
	must(t, err)
	if res.Status != checkpoint.StatusDone {
		t.Fatalf("resume with --max-tokens: %s (%s)", res.Status, res.Reason)
	}
}
