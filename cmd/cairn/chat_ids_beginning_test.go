package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn chat --id lead.mid`, an id no agent has that begins
// sub-agents' ids (a sub-agent's name without its digest), said only that
// the agent did not exist and to give its agent file, where every other
// command that takes an agent id names the agents it begins. It now
// refuses it the same way, exit 2, naming them, before it reads a line.
func TestChatNamesTheAgentsAnIDBegins(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	list := "  - tool_calls: [{name: list_dir, input: {path: .}}]\n"
	for name, text := range map[string]string{
		"agent.yaml": childLimitTree,
		"lead.yaml":  "turns:\n  - tool_calls: [{name: delegate, input: {agent: mid, task: list it}}]\n  - text: listed\n",
		"mid.yaml":   "turns:\n  - tool_calls: [{name: delegate, input: {agent: alpha, task: list it}}]\n  - text: listed\n",
		"alpha.yaml": "turns:\n" + list + list + list + "  - text: listed\n",
	} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	store, cache := filepath.Join(dir, "store"), cacheForTests(t)
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cache, "--id", "lead", "-f", filepath.Join(dir, "agent.yaml"), "go"); code != exitPaused {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	_, alpha := lsStatuses(t, store)
	code, out, errOut := cairnIn(t, "hello\n", "chat", "--id", "lead.mid", "--store", store, "--cache", cache)
	want := `agent "lead.mid": not found`
	if code != exitUsage || !strings.Contains(errOut, want) || !strings.Contains(errOut, alpha) {
		t.Errorf("chat --id lead.mid: exit %d: %s\nwant exit 2, %s, naming %s", code, errOut, want, alpha)
	}
	if strings.Contains(errOut, "conversation") || out != "" {
		t.Errorf("the chat began:\nstdout: %s\nstderr: %s", out, errOut)
	}
	code, _, errOut = cairnIn(t, "hello\n", "chat", "--id", "lead.mi", "--store", store, "--cache", cache)
	if code != exitUsage || strings.Contains(errOut, alpha) || !strings.Contains(errOut, "give its agent file") {
		t.Errorf("chat --id lead.mi: exit %d: %s\nwant exit 2 naming no other agent", code, errOut)
	}
}
