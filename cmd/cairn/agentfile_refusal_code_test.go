package main

import (
	"strings"
	"testing"
)

// Regression: an agent file whose sub-agent asks for a tool its parent
// is not granted made `cairn run` exit 1 (failed), though the file is
// wrong, which is 2, as `cairn workflow run` of the same file says.
func TestAgentFileRefusedForItsSubAgentExitsTwo(t *testing.T) {
	agentFile, store := scriptAgent(t, `name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
agents:
  - name: writer
    description: writes
    model: {provider: script, script: script.yaml}
    tools: [{module: builtin, only: [write_file]}]
`, "turns:\n  - text: hi\n")
	code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lead", "-f", agentFile, "go")
	if code != exitUsage || !strings.Contains(errOut, "sub-agent") {
		t.Fatalf("run: exit %d: %s; want 2 naming the sub-agent", code, errOut)
	}
}
