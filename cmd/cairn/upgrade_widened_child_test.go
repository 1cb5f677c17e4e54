package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn resume CHILD --upgrade` took up a sub-agent's file
// edited to ask for a tool its parent does not have. It is refused as the
// delegation would be (exit 2, naming the line), and the child goes on as
// it was without --upgrade.
func TestResumeUpgradeOfAWidenedSubAgentIsRefused(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	kid := "name: kid\nmodel: {provider: script, script: kid-script.yaml}\nlimits: {max_rounds: 1}\ntools: [{module: builtin, only: [%s]}]\n"
	list := "  - tool_calls: [{name: list_dir, input: {path: .}}]\n"
	for name, text := range map[string]string{
		"agent.yaml": `name: lead
model: {provider: script, script: lead.yaml}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
agents: [{name: kid, description: lists, file: kid.yaml}]
`,
		"lead.yaml":       "turns:\n  - tool_calls: [{name: delegate, input: {agent: kid, task: list it}}]\n  - text: listed\n",
		"kid.yaml":        strings.Replace(kid, "%s", "list_dir", 1),
		"kid-script.yaml": "turns:\n" + list + list + "  - text: listed\n",
	} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	store := filepath.Join(dir, "store")
	code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lead", "-f", filepath.Join(dir, "agent.yaml"), "go")
	if code != exitPaused {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	var child string
	for id := range lsStatusOf(t, store) {
		if strings.Contains(id, ".kid-") {
			child = id
		}
	}
	must(t, os.WriteFile(filepath.Join(dir, "kid.yaml"), []byte(strings.Replace(kid, "%s", "list_dir, write_file", 1)), 0o644))
	code, _, errOut = cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "--upgrade", "--max-rounds", "5", child)
	want := "kid.yaml line 4: sub-agent kid: tool module builtin asks for the tool write_file, which its parent's grant does not have"
	if code != exitUsage || !strings.Contains(errOut, want) {
		t.Fatalf("resume --upgrade %s: exit %d: %s; want 2 saying %q", child, code, errOut, want)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "--max-rounds", "5", child); code != exitDone {
		t.Fatalf("resume %s without --upgrade: exit %d: %s", child, code, errOut)
	}
}
