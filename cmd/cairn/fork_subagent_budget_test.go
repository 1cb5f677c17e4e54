package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fork of a sub-agent, resumed, was stopped by the token
// budget of the tree its source was in ("the tree of lead reached
// max_tokens"), which does not count the fork and which the fork's own
// --max-tokens could not raise, and was told to resume lead, whose resume
// never touches the fork: it could not go on at all. A fork is the top of
// a tree of its own, bound by its own limits.
func TestForkOfASubAgentIsBoundByItsOwnLimits(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "lead.yaml", "name: lead\nmodel: {provider: script, script: lead.s.yaml}\nworkspace: ws\ntools: [{module: builtin}]\n"+
		"limits: {max_tokens: 150}\nagents:\n  - name: alpha\n    description: writes\n    model: {provider: script, script: alpha.s.yaml}\n"+
		"    tools: [{module: builtin, only: [write_file]}]\n    approvals: [{tool: write_file, action: ask}]\n")
	writeIn(t, dir, "lead.s.yaml", "turns:\n  - tool_calls: [{name: delegate, input: {agent: alpha, task: write it}}]\n  - text: lead done\n")
	writeIn(t, dir, "alpha.s.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: x}}]\n  - text: alpha done\n")
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, out, errOut := cairn(t, append([]string{"run", "--id", "lead", "-f", filepath.Join(dir, "lead.yaml"), "go"}, flags...)...); code != exitApproval {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ := cairn(t, "ls", "--store", store)
	var alpha string
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "lead.alpha-") {
			alpha = f
		}
	}
	if alpha == "" {
		t.Fatalf("no sub-agent in ls:\n%s", out)
	}
	mine := filepath.Join(t.TempDir(), "mine")
	if code, out, errOut := cairn(t, append([]string{"fork", "--as", "mine", "--workspace", mine, alpha}, flags...)...); code != exitDone {
		t.Fatalf("fork: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := cairn(t, append([]string{"resume", "mine"}, flags...)...)
	if code != exitApproval || strings.Contains(out+errOut, "the tree of lead") || strings.Contains(out+errOut, "resume lead") {
		t.Fatalf("resume of the fork: exit %d\n%s%s\nwant it to go on, bound by its own limits, to its call that waits for approval", code, out, errOut)
	}
	if code, out, errOut := cairn(t, append([]string{"approve", "mine", "call_1_0"}, flags...)...); code != exitDone {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cairn(t, append([]string{"resume", "mine"}, flags...)...); code != exitDone {
		t.Fatalf("resume of the fork after the approval: exit %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(mine, "a.txt")); err != nil || string(b) != "x" {
		t.Errorf("the fork's approved call: a.txt %q, %v", b, err)
	}
}
