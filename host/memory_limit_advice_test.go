package host

import (
	"path/filepath"
	"strings"
	"testing"
)

// A module whose memory starts larger than sandbox: {memory} fails its
// call saying both sizes and the setting that raises the limit. The model
// once read wazero's words alone: "not a valid WebAssembly module:
// section memory: min 45 pages (2 Mi) over limit of 32 pages (2 Mi)".
func TestMemoryLimitBelowTheModulesStartSaysSo(t *testing.T) {
	af := agentIn(t, `
name: small
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: textstats.wasm, grant: {workspace: ro}}]
sandbox: {memory: 2MiB}
`, `
turns:
  - tool_calls: [{name: text_stats, input: {path: a.txt}}]
  - text: done
`)
	copyFile(t, filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm"), filepath.Join(af.Dir, "textstats.wasm"))
	res, _ := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	m := stateMessages(t, res.Agent)["call_1_0"]
	if !m.IsError || !strings.Contains(m.Text, "memory limit reached: the module's memory starts at") ||
		!strings.Contains(m.Text, "more than the limit of 2 MiB (the agent file's sandbox: {memory} sets the limit)") {
		t.Fatalf("the call's result: %+v", m)
	}
}
