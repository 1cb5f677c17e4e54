package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cairn show of an inline sub-agent printed its agent file as it is
// stored: each line where the parent's file has it, after a blank line
// for each line above it there, and indented as deep as the entry. It is
// shown from its first line, dedented; what is stored, which --json
// prints, is as it was.
func TestShowInlineSubAgentIsShownWithoutPaddingAndDedented(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	for name, text := range map[string]string{
		"agent.yaml": `name: lead
model: {provider: script, script: lead.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: mid
    description: hands the listing on
    model: {provider: script, script: mid.yaml}
    tools: [{module: builtin, only: [list_dir]}]
    agents:
      - name: alpha
        description: lists the workspace
        model: {provider: script, script: alpha.yaml}
        # what it is told
        system: |
          List the workspace.
            All of it.

        tools: [{module: builtin, only: [list_dir]}]
`,
		"lead.yaml":  "turns:\n  - tool_calls: [{name: delegate, input: {agent: mid, task: list it}}]\n  - text: listed\n",
		"mid.yaml":   "turns:\n  - tool_calls: [{name: delegate, input: {agent: alpha, task: list it}}]\n  - text: listed\n",
		"alpha.yaml": "turns:\n  - text: listed\n",
	} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	store := filepath.Join(dir, "store")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lead", "-f", filepath.Join(dir, "agent.yaml"), "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	_, alpha := lsStatuses(t, store)
	_, out, errOut := cairn(t, "show", "--store", store, alpha)
	want := "\nagent file\n" +
		"  name: alpha\n" +
		"  \n" +
		"  model: {provider: script, script: alpha.yaml}\n" +
		"  # what it is told\n" +
		"  system: |\n" +
		"    List the workspace.\n" +
		"      All of it.\n" +
		"  \n" +
		"  tools: [{module: builtin, only: [list_dir]}]\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("show %s:\n%s%s\nwant it to end with%s", alpha, out, errOut, want)
	}
	_, out, _ = cairn(t, "show", "--store", store, "--json", alpha)
	var v struct {
		AgentFile string `json:"agent_file"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.AgentFile, strings.Repeat("\n", 10)) || !strings.Contains(v.AgentFile, "\n        model: {provider: script, script: alpha.yaml}\n") {
		t.Errorf("show --json %s: the agent file is not as stored:\n%q", alpha, v.AgentFile)
	}
}
