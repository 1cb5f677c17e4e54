package host

import (
	"context"
	"strings"
	"testing"
)

// Regression: `cairn resume CHILD --upgrade` of a sub-agent defined inline
// in its parent's agent file failed with "read agent file: open : no such
// file or directory": such a sub-agent has no agent file of its own to read
// again. It is refused, saying so and how to go on.
func TestUpgradeOfAnInlineSubAgentSaysItHasNoFile(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: kid
    description: asks
    model: {provider: script, script: script.yaml}
    tools: [{module: builtin, only: [write_file]}]
    approvals: [{tool: write_file, action: ask}]
`, `turns:
  - tool_calls: [{name: delegate, input: {agent: kid, task: write}}]
  - tool_calls: [{name: write_file, input: {path: a.txt, content: a}}]
  - text: done
`)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	kid := childID("lead", "kid", "call_1_0")
	_, err = eng.Resume(context.Background(), ResumeOptions{ID: kid, Upgrade: true})
	if err == nil || !strings.Contains(err.Error(), "no agent file of its own") || strings.Contains(err.Error(), "open :") {
		t.Fatalf("resume --upgrade of the inline sub-agent: %v", err)
	}
}
