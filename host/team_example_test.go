package host

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// The team example runs as its agent file says: a plan, two delegations,
// each sub-agent's work in the workspace, the brief, and the tree in the
// store.
func TestTeamExampleRuns(t *testing.T) {
	af, err := LoadAgentFile("../examples/team/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	copyDir(t, af.WorkspaceDir(), ws)
	for _, f := range []string{"BRIEF.md", "SUMMARY.md"} {
		os.Remove(filepath.Join(ws, f))
	}
	eng, store := fileEngine(t)
	res, events := collectOn(t, eng, RunOptions{Agent: af, ID: "team", Workspace: ws, Prompt: af.Prompt})
	if res.Status != StatusDone || res.Rounds != 4 {
		t.Fatalf("run: %+v", res)
	}
	for _, f := range []string{"BRIEF.md", "SUMMARY.md"} {
		if b, err := os.ReadFile(filepath.Join(ws, f)); err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	kids, err := Children(t.Context(), store, "team")
	if err != nil || len(kids) != 2 {
		t.Fatalf("children: %+v, %v", kids, err)
	}
	rec, _ := store.Read("team")
	if got := toolTexts(rec.State)[1]; !strings.HasPrefix(got, "2 open items") {
		t.Fatalf("the counter's answer: %q", got)
	}
	want := []checkpoint.Todo{{Text: "count the open items", Status: checkpoint.TodoDone},
		{Text: "summarise the notes", Status: checkpoint.TodoDone}, {Text: "write BRIEF.md", Status: checkpoint.TodoInProgress}}
	if !reflect.DeepEqual(rec.State.Todos, want) || eventOf(events, EventTodos) == nil {
		t.Fatalf("the task list: %+v", rec.State.Todos)
	}
}
