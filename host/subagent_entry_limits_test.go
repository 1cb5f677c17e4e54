package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: a limit a parent gave on a module's entry (limits:) was not
// its sub-agent's: a sub-agent whose entry for that module left it out ran
// with its sandbox: value (the parent's sandbox:, else the sandbox's
// default), so under a parent whose builtin entry had {timeout: 1s} a
// sub-agent that said nothing of limits was refused as asking for 30s.
// Now a limit the sub-agent's entry and its sandbox: both leave out is
// the parent's entry's for that module: the child runs, and is stopped at
// its parent's second.
func TestSubAgentInheritsItsParentsModuleEntryLimits(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [spin], limits: {timeout: 1s}}]
agents:
  - name: kid
    description: spins
    model: {provider: script, script: kid.yaml}
    tools: [{module: hostile.wasm, only: [spin]}]
    agents:
      - name: grandkid
        description: spins too
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
	rec, err := store.Read(childID("lead", "kid", "call_1_0"))
	must(t, err)
	var spun string
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool {
			spun = m.Text
		}
	}
	if !strings.Contains(spun, "time limit") || !strings.Contains(spun, "1s") {
		t.Errorf("the child's spin: %q; want it stopped at its parent's entry's limit of 1s", spun)
	}
}

// A sub-agent's entry may still not ask for more than its parent's entry
// for the module, nor may its sandbox: where its entry leaves a limit out;
// a narrower sandbox: value is kept, not raised to the parent's entry's.
func TestSubAgentModuleEntryLimitsNarrowTheParentsEntry(t *testing.T) {
	parent := `name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, limits: {timeout: 2s, memory: 16MiB}}]
agents:
  - name: kid
    description: k
    model: {provider: script, script: kid.yaml}
`
	load := func(child string) (*AgentFile, error) {
		af, err := ParseAgentFile([]byte(parent+child), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return af.SubAgentFile("kid")
	}
	for _, tc := range []struct{ name, child, want string }{
		{"entry", "    tools: [{module: builtin, limits: {timeout: 1m}}]\n", "timeout: 1m0s (its parent's 2s)"},
		{"sandbox", "    sandbox: {memory: 1GiB}\n    tools: [{module: builtin}]\n", "memory: 1GiB (its parent's 16MiB)"},
	} {
		if _, err := load(tc.child); !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v; want ErrSubAgent saying %q", tc.name, err, tc.want)
		}
	}
	kid, err := load("    sandbox: {timeout: 1s}\n    tools: [{module: builtin}]\n")
	if err != nil {
		t.Fatalf("a narrower sandbox: was refused: %v", err)
	}
	got := kid.Sandbox.overriddenBy(kid.Tools[0].Limits)
	if got.Timeout != Duration(1e9) || got.Memory != 16<<20 {
		t.Errorf("the child's builtin runs with %+v; want its own timeout 1s and its parent's entry's memory 16MiB", got)
	}
}
