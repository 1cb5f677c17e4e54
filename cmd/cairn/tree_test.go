package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The team example seen through the command line: ls shows the tree, show
// the children and the task list, log a child's own transcript (its task
// and nothing of its parent's), events --agent one child's events.
func TestTeamTreeOnTheCommandLine(t *testing.T) {
	store := teamRun(t)
	_, out, _ := cairn(t, "ls", "--store", store)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "team ") || !strings.HasPrefix(lines[2], "├ team.counter-") || !strings.HasPrefix(lines[3], "└ team.summariser-") {
		t.Fatalf("ls:\n%s", out)
	}
	counter := strings.Fields(lines[2])[1]
	_, out, _ = cairn(t, "show", "--store", store, "team")
	for _, want := range []string{"children   " + counter + " · done", "[x] summarise the notes", "[~] write BRIEF.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = cairn(t, "show", "--store", store, counter)
	if !strings.Contains(out, "parent     team · call call_2_0 · sub-agent counter · depth 1") {
		t.Errorf("show of the child:\n%s", out)
	}
	_, out, _ = cairn(t, "log", "--store", store, counter)
	if !strings.Contains(out, "user: Count the TODO lines in todo.txt") || strings.Contains(out, "BRIEF") {
		t.Errorf("log of the child:\n%s", out)
	}
	code, out, errOut := cairn(t, "events", "--store", store, "--json", "--agent", counter, "team")
	if code != exitDone {
		t.Fatalf("events --agent: exit %d: %s", code, errOut)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct{ Agent, Parent string }
		must(t, json.Unmarshal([]byte(line), &e))
		if e.Agent != counter || e.Parent != "team" {
			t.Fatalf("events --agent %s gave %s", counter, line)
		}
		n++
	}
	if n < 5 {
		t.Fatalf("events --agent: %d events", n)
	}
	if code, _, errOut := cairn(t, "events", "--store", store, "--agent", "team", counter); code != exitUsage || !strings.Contains(errOut, "is not a sub-agent of") {
		t.Fatalf("events of a parent through its child: exit %d: %s", code, errOut)
	}

	// The tree travels whole: exported from here and imported elsewhere,
	// ls there lists the same three agents as a tree.
	file := filepath.Join(t.TempDir(), "team.cairn")
	if code, out, errOut := cairn(t, "export", "--store", store, "-o", file, "team"); code != exitDone || !strings.Contains(out, "2 sub-agents") {
		t.Fatalf("export: exit %d: %s%s", code, out, errOut)
	}
	other := t.TempDir()
	if code, out, errOut := cairn(t, "import", "--store", other, file); code != exitDone || !strings.Contains(out, "imported agent team") {
		t.Fatalf("import: exit %d: %s%s", code, out, errOut)
	}
	_, here, _ := cairn(t, "ls", "--store", store)
	_, there, _ := cairn(t, "ls", "--store", other)
	if here != there {
		t.Fatalf("ls after import:\n%s\nwant:\n%s", there, here)
	}
}

// treePrefixes draws siblings with ├ but the last, and carries the
// ancestors' branches down with │.
func TestTreePrefixes(t *testing.T) {
	got := treePrefixes([]int{0, 1, 2, 2, 1, 2, 0})
	want := []string{"", "├ ", "│ ├ ", "│ └ ", "└ ", "  └ ", ""}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// teamRun runs the team example as agent team, in a copy of its
// workspace, and returns its store.
func teamRun(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	for _, f := range []string{"notes.md", "todo.txt"} {
		b, err := os.ReadFile(filepath.Join("../../examples/team/workspace", f))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(ws, f), b, 0o644))
	}
	store := t.TempDir()
	if code, out, errOut := cairn(t, "run", "--store", store, "--id", "team", "--workspace", ws, "-f", "../../examples/team/agent.yaml"); code != exitDone {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	return store
}
