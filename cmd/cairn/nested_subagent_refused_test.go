package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a sub-agent's own sub-agent that asked for more than the
// sub-agent has (a grant, a sandbox limit) was taken at the run's start:
// the top-level agent ran, spent its turn, and failed (exit 1) when the
// sub-agent started, naming "the agent file" for the file. It is refused
// before anything runs (exit 2), nothing stored, naming the file and the
// line, as a sub-agent of the top-level agent is.
func TestNestedSubAgentAskingForMoreIsRefusedAtStart(t *testing.T) {
	const agent = `name: lead
model: {provider: script, script: s.yaml}
tools: [{module: builtin, grant: {workspace: rw}}]
sandbox: {timeout: 2s}
agents:
  - name: mid
    description: delegates to low
    model: {provider: script, script: s.yaml}
    tools: [{module: builtin}]
    agents:
      - name: low
        description: does the work
        model: {provider: script, script: s.yaml}
`
	for _, c := range []struct{ low, want string }{
		{"        tools: [{module: builtin, grant: {workspace: rw, clock: true}}]\n", "line 14: sub-agent low: tool module builtin asks for clock: true"},
		{"        tools: [{module: builtin}]\n        sandbox: {timeout: 10s}\n", "line 14: sub-agent low: tool module builtin would run with timeout: 10s"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "agent.yaml")
		must(t, os.WriteFile(file, []byte(agent+c.low), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("turns:\n  - tool_calls: [{name: delegate, input: {agent: mid, task: t}}]\n  - text: done\n"), 0o644))
		store := t.TempDir()
		code, out, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "-w", dir, "-f", file, "go")
		if code != exitUsage || !strings.Contains(errOut, file+" "+c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming %s %s", c.low, code, errOut, file, c.want)
		}
		if strings.Contains(out, "delegate") {
			t.Errorf("%s: the run started: %s", c.low, out)
		}
		if entries, _ := os.ReadDir(filepath.Join(store, "agents")); len(entries) > 0 {
			t.Errorf("%s: an agent was stored", c.low)
		}
	}
}
