package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fork of a sub-agent was listed under the sub-agent's
// parent, by `cairn ls`, in `cairn show` of the parent among its children,
// and went into the parent's export as one of its sub-agents, though no
// delegation of the parent made it and resuming the parent never touches
// it. A fork is an agent of its own: listed at the top, with its lineage,
// and the parent's tree is what its delegations made.
func TestForkOfASubAgentIsListedAsItsOwnAgent(t *testing.T) {
	store := teamRun(t)
	_, out, _ := cairn(t, "ls", "--store", store)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "├ team.counter-") {
		t.Fatalf("ls:\n%s", out)
	}
	counter := strings.Fields(lines[2])[1]
	if code, out, errOut := cairn(t, "fork", "--store", store, "--as", "mine", "--workspace", filepath.Join(t.TempDir(), "mine"), counter); code != exitDone {
		t.Fatalf("fork: exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ = cairn(t, "ls", "--store", store)
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "mine") && !strings.HasPrefix(l, "mine ") {
			t.Errorf("ls lists the fork under another agent:\n%s", out)
		}
	}
	if _, out, _ = cairn(t, "show", "--store", store, "team"); strings.Contains(out, "mine") {
		t.Errorf("show of the sub-agent's parent lists the fork among its children:\n%s", out)
	}
	if _, out, _ = cairn(t, "show", "--store", store, "mine"); !strings.Contains(out, "forked     from "+counter) {
		t.Errorf("show of the fork:\n%s", out)
	}
	file := filepath.Join(t.TempDir(), "team.cairn")
	if code, out, errOut := cairn(t, "export", "--store", store, "-o", file, "team"); code != exitDone || !strings.Contains(out, "2 sub-agents") {
		t.Fatalf("export of the parent: exit %d: %s%s; want its 2 sub-agents, not the fork", code, out, errOut)
	}
}
