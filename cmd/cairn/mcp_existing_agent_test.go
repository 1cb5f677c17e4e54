package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mcpLines are a client's initialize, initialized and a write_file call,
// one line each, for `cairn mcp` on stdin.
const mcpLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"pwn.txt","content":"x"}}}
`

// Regression: `cairn mcp --id EXISTING --workspace DIR` without -f served
// the agent with the bare tools agent and journaled it as the agent's
// definition: its approval rules (a deny rule included), model and prompt
// were gone for good, and the denied write ran. Served without -f, an
// existing agent keeps the agent file it was made with, as `cairn run
// --id` does; --tools would replace it, and is refused, but for an agent
// `cairn mcp` made without -f, which has nothing else to lose.
func TestMCPExistingAgentKeepsItsAgentFile(t *testing.T) {
	agent, store := scriptAgent(t, `name: guarded
model: {provider: script, script: script.yaml}
prompt: look around
workspace: workspace
tools: [{module: builtin}]
approvals:
  - {tool: write_file, action: deny}
`, "turns:\n  - tool_calls: [{name: list_dir, input: {}}]\n  - text: done\n")
	ws := filepath.Join(filepath.Dir(agent), "workspace")
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"run", "-f", agent, "--id", "g1"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	code, out, errOut := cairnIn(t, mcpLines, append([]string{"mcp", "--id", "g1", "--workspace", ws}, flags...)...)
	if code != exitDone || !strings.Contains(out, "was denied") || !strings.Contains(out, "approvals[0]") {
		t.Errorf("the write served without -f: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwn.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied write reached the workspace: %v", err)
	}
	_, shown, _ := cairn(t, "show", "--store", store, "g1")
	if !strings.Contains(shown, "name: guarded") || !strings.Contains(shown, "action: deny") {
		t.Errorf("cairn show after the session:\n%s", shown)
	}
	code, _, errOut = cairnIn(t, mcpLines, append([]string{"mcp", "--id", "g1", "--workspace", ws, "--tools", t.TempDir()}, flags...)...)
	if code != exitUsage || !strings.Contains(errOut, "--tools") || !strings.Contains(errOut, "cairn mcp --id g1") {
		t.Errorf("--tools for an agent made with an agent file: exit %d, %s", code, errOut)
	}
	// An agent `cairn mcp` made without -f takes other tools.
	for _, args := range [][]string{{"--workspace", ws}, {"--workspace", ws, "--tools", t.TempDir()}, {}} {
		code, _, errOut := cairnIn(t, "", append(append([]string{"mcp", "--id", "plain"}, args...), flags...)...)
		if code != exitDone {
			t.Errorf("cairn mcp --id plain %v: exit %d, %s", args, code, errOut)
		}
	}
}
