package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A sandbox limit a sub-agent leaves out is its parent's, not the
// sandbox's default: under a parent with sandbox {timeout: 1s}, a child
// that says nothing of limits runs its calls for at most a second.
func TestSubAgentInheritsItsParentsSandboxLimits(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [spin]}]
sandbox: {timeout: 1s}
agents:
  - name: kid
    description: spins
    model: {provider: script, script: kid.yaml}
    tools: [{module: hostile.wasm, only: [spin]}]
`, `turns:
  - tool_calls: [{name: delegate, input: {agent: kid, task: spin}}]
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	must(t, os.WriteFile(filepath.Join(af.Dir, "kid.yaml"), []byte("turns:\n  - tool_calls: [{name: spin, input: {}}]\n  - text: spun\n"), 0o644))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if res.Status != StatusDone {
		t.Fatalf("run: %+v", res)
	}
	kid := childID("lead", "kid", "call_1_0")
	rec, err := store.Read(kid)
	must(t, err)
	var spun string
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool {
			spun = m.Text
		}
	}
	if !strings.Contains(spun, "time limit") || !strings.Contains(spun, "1s") {
		t.Errorf("the child's spin: %q; want it stopped at its parent's limit of 1s", spun)
	}
}
