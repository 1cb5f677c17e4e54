package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// childLimitTree is a lead whose sub-agent mid delegates to alpha, whose
// own max_rounds stops it before its task is done.
const childLimitTree = `name: lead
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
        description: lists the workspace, again and again
        model: {provider: script, script: alpha.yaml}
        tools: [{module: builtin, only: [list_dir]}]
        limits: {max_rounds: 2}
`

// Regression: a parent whose sub-agent stopped at its own limit ended its
// run paused, but `cairn ls` and `cairn show` called it interrupted, as if
// its process had been killed: the delegation it waits on leaves its round
// open, and an open round made an agent interrupted. A run that ended
// paused is listed paused, with its reason, whose advice (and the exit
// message's) is what continues the tree: raise the limit on the child,
// then resume the top-level agent; following it finishes the tree.
func TestParentPausedByChildLimitIsListedPaused(t *testing.T) {
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
	code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lead", "-f", filepath.Join(dir, "agent.yaml"), "go")
	if code != exitPaused {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	mid, alpha := lsStatuses(t, store)
	advice := "raise it resuming the sub-agent (`cairn resume " + alpha + "` with that flag), then `cairn resume lead`"
	if !strings.HasSuffix(strings.TrimSpace(errOut), advice) {
		t.Fatalf("run's advice is not what continues the tree:\n%s\nwant it to end with %s", errOut, advice)
	}
	want := map[string]string{"lead": "paused", mid: "paused", alpha: "paused"}
	if got := lsStatusOf(t, store); !equalMaps(got, want) {
		t.Fatalf("ls statuses %v, want %v", got, want)
	}
	for _, id := range []string{"lead", mid} {
		_, out, _ := cairn(t, "show", "--store", store, id)
		if !strings.Contains(out, "status     paused · sub-agent ") || !strings.Contains(out, advice+"\n") {
			t.Errorf("show %s:\n%s", id, out)
		}
		_, out, _ = cairn(t, "runs", "--store", store, id)
		if !strings.Contains(out, "paused: sub-agent ") || strings.Contains(out, "interrupted") {
			t.Errorf("runs %s:\n%s", id, out)
		}
	}

	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "--max-rounds", "5", alpha); code != exitDone {
		t.Fatalf("resume %s: exit %d: %s", alpha, code, errOut)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "lead"); code != exitDone {
		t.Fatalf("resume lead: exit %d: %s", code, errOut)
	}
	want = map[string]string{"lead": "done", mid: "done", alpha: "done"}
	if got := lsStatusOf(t, store); !equalMaps(got, want) {
		t.Fatalf("ls statuses after following the advice %v, want %v", got, want)
	}
}

// lsStatuses are the ids of the tree's sub-agents, as `cairn ls` lists them.
func lsStatuses(t *testing.T, store string) (mid, alpha string) {
	t.Helper()
	for id := range lsStatusOf(t, store) {
		switch {
		case strings.Contains(id, ".alpha-"):
			alpha = id
		case strings.Contains(id, ".mid-"):
			mid = id
		}
	}
	if mid == "" || alpha == "" {
		t.Fatalf("ls lacks the sub-agents: %v", lsStatusOf(t, store))
	}
	return mid, alpha
}

// lsStatusOf is each agent's status as `cairn ls --json` gives it.
func lsStatusOf(t *testing.T, store string) map[string]string {
	t.Helper()
	code, out, errOut := cairn(t, "ls", "--json", "--store", store)
	if code != exitDone {
		t.Fatalf("ls: exit %d: %s", code, errOut)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct{ Agent, Status string }
		must(t, json.Unmarshal([]byte(line), &l))
		got[l.Agent] = l.Status
	}
	return got
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
