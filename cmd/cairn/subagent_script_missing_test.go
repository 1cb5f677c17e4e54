package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a sub-agent whose model's script is not there was taken at
// the run's start, where the top-level agent's is refused: the parent ran,
// spent its turn, and failed (exit 1) when it delegated. It is refused
// before anything runs (exit 2), nothing stored, naming the file and the
// line of the sub-agent, at any depth.
func TestSubAgentWithoutItsScriptIsRefusedAtStart(t *testing.T) {
	const head = `name: lead
model: {provider: script, script: s.yaml}
tools: [{module: builtin}]
agents:
  - name: mid
    description: delegates to low
    model: {provider: script, script: `
	for _, c := range []struct{ rest, want string }{
		{"nosuch.yaml}\n    tools: [{module: builtin}]\n", "agent.yaml line 5: sub-agent mid: model: script provider: open "},
		{"s.yaml}\n    tools: [{module: builtin}]\n    agents:\n      - name: low\n        description: works\n" +
			"        model: {provider: script, script: nosuch.yaml}\n        tools: [{module: builtin}]\n", "agent.yaml line 10: sub-agent low: model: script provider: open "},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "agent.yaml")
		must(t, os.WriteFile(file, []byte(head+c.rest), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("turns:\n  - tool_calls: [{name: delegate, input: {agent: mid, task: t}}]\n  - text: done\n"), 0o644))
		store := t.TempDir()
		code, out, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "-w", dir, "-f", file, "go")
		if code != exitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "nosuch.yaml") {
			t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, errOut, c.want)
		}
		if strings.Contains(out, "delegate") {
			t.Errorf("the run started: %s", out)
		}
		if entries, _ := os.ReadDir(filepath.Join(store, "agents")); len(entries) > 0 {
			t.Errorf("an agent was stored")
		}
		// A workflow's step of that agent is refused by the check, before
		// any step runs.
		flow := filepath.Join(dir, "flow.yaml")
		must(t, os.WriteFile(flow, []byte("name: f\nworkspace: .\nsteps:\n  - name: lead\n    agent: agent.yaml\n    prompt: go\n"), 0o644))
		code, out, errOut = cairn(t, "workflow", "run", "--store", store, "--cache", cacheForTests(t), flow)
		if code != exitUsage || !strings.Contains(errOut, "line 5: step lead") || !strings.Contains(errOut, c.want) || strings.Contains(out, "starts") {
			t.Errorf("workflow: exit %d, stdout %q, stderr %q; want exit 2 naming the step's line and %q", code, out, errOut, c.want)
		}
	}
}
