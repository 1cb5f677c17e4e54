package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn resume CHILD` of a sub-agent whose tree had stopped
// ended done, exit 0, and said nothing of its parent, which had not taken
// its answer: the tree looked finished while its top-level agent stayed
// paused. The child's resume now ends with a line naming the top-level
// agent and the command that takes the answer and goes on with the tree;
// that command finishes the tree. And an id that is no agent but begins
// sub-agents' ids (the name without its digest) names them.
func TestResumeChildAloneNamesTheParentToResume(t *testing.T) {
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
	store := filepath.Join(dir, "store")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lead", "-f", filepath.Join(dir, "agent.yaml"), "go"); code != exitPaused {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	mid, alpha := lsStatuses(t, store)

	code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "lead.mid")
	if code != exitUsage || !strings.Contains(errOut, `agent "lead.mid": not found`) || !strings.Contains(errOut, mid) {
		t.Fatalf("resume lead.mid: exit %d: %s; want exit 2 naming %s", code, errOut, mid)
	}

	code, _, errOut = cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "--max-rounds", "5", alpha)
	want := "`cairn resume lead`"
	if code != exitDone || !strings.Contains(errOut, "sub-agent of "+mid) || !strings.Contains(errOut, want) {
		t.Fatalf("resume %s: exit %d: %s\nwant it to name its parent %s and %s", alpha, code, errOut, mid, want)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "lead"); code != exitDone {
		t.Fatalf("resume lead: exit %d: %s", code, errOut)
	}
	// The tree is done: resuming a child says nothing more of it.
	if _, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), alpha); strings.Contains(errOut, want) {
		t.Errorf("resume %s of a finished tree: %s", alpha, errOut)
	}
}

// A sub-agent whose answer its parent took already, in a tree stopped
// after it (lead's max_rounds), says nothing of its parent when resumed
// by itself: the parent has its answer, and nothing of the child is
// left to take.
func TestResumeChildAloneAnsweredSaysNothingOfItsParent(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	for name, text := range map[string]string{
		"agent.yaml": "name: lead\nmodel: {provider: script, script: lead.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n" +
			"limits: {max_rounds: 1}\nagents:\n  - name: kid\n    description: lists\n    model: {provider: script, script: kid.yaml}\n" +
			"    tools: [{module: builtin, only: [list_dir]}]\n",
		"lead.yaml": "turns:\n  - tool_calls: [{name: delegate, input: {agent: kid, task: list}}]\n  - tool_calls: [{name: list_dir, input: {path: .}}]\n  - text: done\n",
		"kid.yaml":  "turns:\n  - tool_calls: [{name: list_dir, input: {path: .}}]\n  - text: listed\n",
	} {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	store := filepath.Join(dir, "store")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lead", "-f", filepath.Join(dir, "agent.yaml"), "go"); code != exitPaused {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	var kid string
	for id := range lsStatusOf(t, store) {
		if strings.HasPrefix(id, "lead.kid-") {
			kid = id
		}
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), kid); code != exitDone || strings.Contains(errOut, "has not taken its answer") {
		t.Fatalf("resume %s: exit %d: %s; want exit 0 and nothing of its parent, which has its answer", kid, code, errOut)
	}
}
