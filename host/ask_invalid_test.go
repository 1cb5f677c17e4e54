package host

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: a call that an ask rule matched was put to a person even
// when its arguments did not match its tool's schema (or it named no
// tool): the person was asked to approve a call that could only fail,
// and a run with no one to ask stopped awaiting approval for it. Such a
// call is not asked about; the model reads the schema's error at once.
func TestInvalidCallIsNotPutToAPerson(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: ask-invalid
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
approvals: [{tool: "*", action: ask}]
`, `turns:
  - tool_calls:
      - {name: write_file, input: {path: out.txt, content: hi, extra: 1}}
      - {name: no_such_tool, input: {}}
  - text: done
`)
	var asked []string
	approve := func(_ context.Context, req ApprovalRequest) (Decision, error) {
		asked = append(asked, req.Call.Tool)
		return Decision{Approved: true}, nil
	}
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "ai", Approver: approve})
	must(t, err)
	if res.Status != StatusDone || len(asked) > 0 {
		t.Fatalf("status %s, asked about %v; want done, no one asked", res.Status, asked)
	}
	rec, err := eng.store.Read("ai")
	must(t, err)
	var results []string
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool {
			if !m.IsError {
				t.Errorf("result of %s is not an error: %q", m.ToolName, m.Text)
			}
			results = append(results, m.Text)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "do not match the input schema") || !strings.Contains(results[1], `there is no tool "no_such_tool"`) {
		t.Errorf("results %q, want the schema's error and the unknown tool's", results)
	}
}
