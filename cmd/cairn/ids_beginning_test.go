package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: an id that is no agent's but begins sub-agents' ids (a
// sub-agent's name without its digest, lead.mid) was refused naming them
// by `cairn resume` alone; every other command that takes an agent id said
// "not found" and no more. Each now refuses it the same way, exit 2,
// naming the agents it begins; an id that begins none at a boundary
// (lead.mi) is not found alone, and an agent that exists, asked for what
// it lacks (a round, a bookmark), is refused as before, naming no other.
func TestCommandsNameTheAgentsAnIDBegins(t *testing.T) {
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
	mid, alpha := lsStatuses(t, store)
	out := filepath.Join(dir, "out.cairn")
	for _, tc := range []struct {
		id   string
		args []string
	}{
		{"lead.mid", []string{"resume", "--cache", cache, "lead.mid"}},
		{"lead.mid", []string{"pause", "lead.mid"}},
		{"lead.mid", []string{"show", "lead.mid"}},
		{"lead.mid", []string{"log", "lead.mid"}},
		{"lead.mid", []string{"log", "--round", "1", "lead.mid"}},
		{"lead.mid", []string{"runs", "lead.mid"}},
		{"lead.mid", []string{"events", "lead.mid"}},
		{"lead.mid", []string{"events", "--run", "r1", "lead.mid"}},
		{"lead.mid", []string{"events", "--agent", "lead.mid", "lead"}},
		{"lead.mid", []string{"verify", "--cache", cache, "lead.mid"}},
		{"lead.mid", []string{"ask", "--cache", cache, "lead.mid", "what", "now"}},
		{"lead.mid", []string{"snapshot", "--cache", cache, "lead.mid"}},
		{"lead.mid", []string{"fork", "--cache", cache, "--as", "copy", "lead.mid"}},
		{"lead.mid", []string{"fork", "--cache", cache, "--as", "copy", "--at-round", "1", "lead.mid"}},
		{"lead.mid", []string{"export", "-o", out, "lead.mid"}},
		{"lead.mid", []string{"diff", "lead.mid"}},
		{"lead.mid", []string{"diff", "--round", "1", "lead.mid"}},
		{"lead.mid", []string{"undo", "--cache", cache, "lead.mid"}},
		{"lead.mid", []string{"approve", "lead.mid", "c1"}},
		{"lead.mid", []string{"deny", "lead.mid", "c1"}},
		{mid + ".alpha-", []string{"show", mid + ".alpha-"}},
		{mid + ".alpha-" + alpha[len(alpha)-8:len(alpha)-4], []string{"log", mid + ".alpha-" + alpha[len(alpha)-8:len(alpha)-4]}},
	} {
		code, _, errOut := cairnProcess(t, append(tc.args, "--store", store)...)
		want := `agent "` + tc.id + `": not found`
		if code != exitUsage || !strings.Contains(errOut, want) || !strings.Contains(errOut, alpha) {
			t.Errorf("cairn %s: exit %d: %s\nwant exit 2, %s, naming %s", strings.Join(tc.args, " "), code, errOut, want, alpha)
		}
	}
	for _, args := range [][]string{
		{"show", "lead.mi"},
		{"events", "--agent", "lead.mi", "lead"},
		{"diff", "--round", "99", "lead"},
		{"fork", "--cache", cache, "--as", "copy", "--from", "nosuch", "lead"},
	} {
		code, _, errOut := cairnProcess(t, append(args, "--store", store)...)
		if code != exitUsage || strings.Contains(errOut, mid) {
			t.Errorf("cairn %s: exit %d: %s\nwant exit 2 naming no other agent", strings.Join(args, " "), code, errOut)
		}
	}
}
