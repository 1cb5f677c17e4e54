package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// delegateScript hands kid one task and then answers.
const delegateScript = `
turns:
  - tool_calls: [{name: delegate, input: {agent: kid, task: do it}}]
  - text: done
`

// Regression: a parent's approval rules did not bind its sub-agents: a
// parent that denied write_file delegated to a child with no rules, and
// the child wrote. Now the child's call is denied by its parent's rule,
// and the denial names it.
func TestSubAgentCallMeetsItsParentsDenyRule(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
approvals:
  - {tool: write_file, action: deny}
agents:
  - name: kid
    description: writes
    model: {provider: script, script: kid.yaml}
    tools: [{module: builtin}]
`, delegateScript, map[string]string{"kid.yaml": `
turns:
  - tool_calls: [{name: write_file, input: {path: protected.txt, content: child}}]
  - text: wrote
`})
	res, _ := collectOn(t, eng, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("run: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(af.WorkspaceDir(), "protected.txt")); !os.IsNotExist(err) {
		t.Fatalf("the child wrote what its parent's rules deny: %v", err)
	}
	rec, err := store.Read(childID("lead", "kid", "call_1_0"))
	if err != nil {
		t.Fatal(err)
	}
	texts := toolTexts(rec.State)
	want := "was denied: the approval rules of its parent, lead, forbid it (approvals[0] of the agent file)"
	if len(texts) != 1 || !strings.Contains(texts[0], want) {
		t.Fatalf("the child's result: %q; want one saying %q", texts, want)
	}
}

// Regression: a parent's ask rule was escaped by a child whose own rule
// allowed the call, and, once the child was resumed from the store, by
// any child at all: its agent file, rebuilt from its definition, had only
// its own rules. Now each of the child's calls is asked about, in its
// first run and after a resume of the child by itself.
func TestSubAgentCallMeetsItsParentsAskRuleAfterResume(t *testing.T) {
	eng, _ := fileEngine(t)
	af := teamIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
approvals:
  - {tool: write_file, action: ask}
agents:
  - name: kid
    description: writes
    model: {provider: script, script: kid.yaml}
    tools: [{module: builtin}]
    approvals: [{tool: write_file, action: allow}]
`, delegateScript, map[string]string{"kid.yaml": `
turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: a}}]
  - tool_calls: [{name: write_file, input: {path: b.txt, content: b}}]
  - text: wrote both
`})
	res, _ := collectOn(t, eng, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	kid := childID("lead", "kid", "call_1_0")
	if res.Status != StatusAwaitingApproval || !strings.Contains(res.Reason, kid) {
		t.Fatalf("run: %+v; want it awaiting approval of the child's write", res)
	}
	if err := eng.Decide(t.Context(), kid, "call_1_0", Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: kid})
	if err != nil {
		t.Fatal(err)
	}
	ws := af.WorkspaceDir()
	if res.Status != StatusAwaitingApproval || res.AwaitingCall() != "call_2_0" {
		t.Fatalf("resumed child: %+v; want it awaiting approval of its second write", res)
	}
	if readFile(t, ws, "a.txt") != "a" {
		t.Fatal("the approved write was not made")
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("the resumed child wrote what its parent's rules ask about: %v", err)
	}
}

// Regression: a call of an MCP server's tool, which runs outside the
// sandbox and which the parent would ask about (no rule of its allows it),
// ran in a child whose own rule allowed it. Now it is asked about.
func TestSubAgentMCPCallMeetsItsParentsDefaultAsk(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	connect := func(context.Context, MCPServer, string, Limits) (ExternalTools, error) { return bigServer{}, nil }
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store, Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	af := teamIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
mcp: [{name: dict, command: [dict]}]
agents:
  - name: kid
    description: looks up
    model: {provider: script, script: kid.yaml}
    mcp: [{name: dict, command: [dict]}]
    approvals: [{tool: lookup, action: allow}]
`, delegateScript, map[string]string{"kid.yaml": `
turns:
  - tool_calls: [{name: lookup, input: {}}]
  - text: found
`})
	res, _ := collectOn(t, eng, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	if res.Status != StatusAwaitingApproval || !strings.Contains(res.Reason, "call_1_0 (lookup)") {
		t.Fatalf("run: %+v; want it awaiting approval of the child's lookup", res)
	}
}
