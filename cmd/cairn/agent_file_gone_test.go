package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: resuming an agent whose agent file is gone warned "the agent
// file F is gone …; resuming with the one the agent started with
// (--upgrade uses the new one)", though there is no new one for --upgrade
// to read. A changed file is still pointed to --upgrade.
func TestResumeOfAnAgentWhoseFileIsGoneGivesNoUpgradeAdvice(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	agent, text := filepath.Join(dir, "agent.yaml"), "name: a\nmodel: {provider: script, script: s.yaml}\nworkspace: ws\n"+
		"tools: [{module: builtin, only: [list_dir]}]\nlimits: {max_rounds: 1}\n"
	writeIn(t, dir, "agent.yaml", text)
	writeIn(t, dir, "s.yaml", "turns:\n  - tool_calls: [{name: list_dir, input: {path: .}}]\n"+
		"  - tool_calls: [{name: list_dir, input: {path: .}}]\n  - tool_calls: [{name: list_dir, input: {path: .}}]\n  - text: done\n")
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, out, errOut := cairn(t, append([]string{"run", "--id", "a", "-f", agent, "go"}, flags...)...); code != exitPaused {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	writeIn(t, dir, "agent.yaml", "# changed\n"+text)
	code, _, errOut := cairn(t, append([]string{"resume", "a"}, flags...)...)
	if code != exitPaused || !strings.Contains(errOut, "changed since the agent started") || !strings.Contains(errOut, "--upgrade uses the new one") {
		t.Errorf("resume after the agent file changed: exit %d, %s", code, errOut)
	}
	must(t, os.Remove(agent))
	code, _, errOut = cairn(t, append([]string{"resume", "--max-rounds", "5", "a"}, flags...)...)
	if code != exitDone || !strings.Contains(errOut, "is gone") || strings.Contains(errOut, "--upgrade") {
		t.Errorf("resume after the agent file was removed: exit %d, %s; want a warning that it is gone, with no --upgrade", code, errOut)
	}
}
