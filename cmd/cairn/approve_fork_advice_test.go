package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn approve` of a call of a fork of a sub-agent said
// `cairn resume PARENT` continues it, PARENT being the sub-agent's parent,
// whose resume never touches the fork: the advice followed the parent the
// fork keeps (for the approval rules above it) as if a delegation had made
// the fork. A fork is an agent of its own, and its own resume continues it.
// Its resume showed it so too, as a sub-agent of that parent, without the
// model's text.
func TestApproveOfAForkOfASubAgentNamesTheFork(t *testing.T) {
	flags, mine := forkOfASubAgent(t, "")
	if code, out, errOut := cairn(t, append([]string{"resume", "mine"}, flags...)...); code != exitApproval {
		t.Fatalf("resume of the fork: exit %d\n%s%s; want it to wait for approval of its call", code, out, errOut)
	}
	code, out, errOut := cairn(t, append([]string{"approve", "mine", "call_1_0"}, flags...)...)
	if code != exitDone || !strings.Contains(out, "`cairn resume mine` continues it") {
		t.Fatalf("approve of the fork's call: exit %d\n%s%s; want it to name `cairn resume mine`", code, out, errOut)
	}
	code, out, errOut = cairn(t, append([]string{"resume", "mine"}, flags...)...)
	if code != exitDone {
		t.Fatalf("resume of the fork after the approval: exit %d\n%s%s", code, out, errOut)
	}
	// Its run is shown as an agent's of its own, model text and all, not
	// as a sub-agent's under the parent it keeps.
	if strings.Contains(out+errOut, "sub-agent of") || !strings.Contains(out, "model: alpha done") {
		t.Errorf("resume of the fork shows it as a sub-agent:\n%s%s", out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(mine, "a.txt")); err != nil || string(b) != "x" {
		t.Errorf("the fork's approved call: a.txt %q, %v", b, err)
	}
}

// forkOfASubAgent runs agent lead (its limits given by leadLimits, a line
// of YAML or ""), whose sub-agent alpha waits for approval of its
// write_file of a.txt, and forks the sub-agent as agent mine in a
// workspace of its own. It returns the store's flags and mine's workspace.
func forkOfASubAgent(t *testing.T, leadLimits string) (flags []string, mine string) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	writeIn(t, dir, "lead.yaml", "name: lead\nmodel: {provider: script, script: lead.s.yaml}\nworkspace: ws\ntools: [{module: builtin}]\n"+
		leadLimits+"agents:\n  - name: alpha\n    description: writes\n    model: {provider: script, script: alpha.s.yaml}\n"+
		"    tools: [{module: builtin, only: [write_file]}]\n    approvals: [{tool: write_file, action: ask}]\n")
	writeIn(t, dir, "lead.s.yaml", "turns:\n  - tool_calls: [{name: delegate, input: {agent: alpha, task: write it}}]\n  - text: lead done\n")
	writeIn(t, dir, "alpha.s.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: x}}]\n  - text: alpha done\n")
	flags = []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	if code, out, errOut := cairn(t, append([]string{"run", "--id", "lead", "-f", filepath.Join(dir, "lead.yaml"), "go"}, flags...)...); code != exitApproval {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ := cairn(t, append([]string{"ls"}, flags[:2]...)...)
	var alpha string
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "lead.alpha-") {
			alpha = f
		}
	}
	if alpha == "" {
		t.Fatalf("no sub-agent in ls:\n%s", out)
	}
	mine = filepath.Join(t.TempDir(), "mine")
	if code, out, errOut := cairn(t, append([]string{"fork", "--as", "mine", "--workspace", mine, alpha}, flags...)...); code != exitDone {
		t.Fatalf("fork: exit %d\n%s%s", code, out, errOut)
	}
	return flags, mine
}
