package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `cairn tools ls -f` lists the tools the agent file gives its agent: a
// module's only: leaves the others out (it once listed every tool of
// the module), and an MCP server's entry, whose tools and schemas the
// server gives when it starts, has no empty `input:` line.
func TestToolsLsOfAnAgentFileListsItsTools(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`name: tl
model: {provider: script, script: script.yaml}
workspace: .
tools: [{module: builtin, only: [read_file]}]
mcp:
  - {name: docs, command: [docs-server, stdio]}
`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns: [{text: hi}]\n"), 0o644))
	code, out, errOut := cairn(t, "tools", "ls", "-f", agent)
	if code != exitDone {
		t.Fatalf("tools ls: exit %d %s", code, errOut)
	}
	if !strings.Contains(out, "read_file  (builtin)") || strings.Contains(out, "write_file") {
		t.Errorf("the agent's tools are read_file alone, as only: says:\n%s", out)
	}
	if !strings.Contains(out, "docs/*  (mcp:docs)") {
		t.Errorf("no entry for the MCP server:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "input:" {
			t.Errorf("an empty input line:\n%s", out)
		}
	}
}
