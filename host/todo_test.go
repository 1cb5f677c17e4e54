package host

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

const todoAgent = `
name: planner
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
todos: true
`

const todoScript = `
turns:
  - tool_calls:
      - name: todo_write
        input: {todos: [{content: read the notes, status: in_progress}, {content: write the report, status: pending}]}
  - tool_calls:
      - name: todo_write
        input: {todos: [{content: read the notes, status: done}, {content: write the report, status: in_progress}]}
      - name: write_file
        input: {path: report.txt, content: done}
  - text: finished
`

var todosAfter2 = []checkpoint.Todo{{Text: "read the notes", Status: checkpoint.TodoDone},
	{Text: "write the report", Status: checkpoint.TodoInProgress}}

// The task list the model writes is the agent's, committed with its round,
// told in an event, and kept by fork.
func TestTodoWriteKeepsTheList(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, todoAgent, todoScript)
	var lists [][]checkpoint.Todo
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "p", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventTodos {
			lists = append(lists, e.Todos)
		}
	}})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if len(lists) != 2 || !reflect.DeepEqual(lists[1], todosAfter2) {
		t.Fatalf("todos events: %+v", lists)
	}
	in, err := Inspect(t.Context(), store, "p")
	if err != nil || !reflect.DeepEqual(in.State.Todos, todosAfter2) {
		t.Fatalf("stored list: %+v, %v", in.State.Todos, err)
	}
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "p", As: "q", Workspace: filepath.Join(t.TempDir(), "q")}); err != nil {
		t.Fatal(err)
	}
	if in, err := Inspect(t.Context(), store, "q"); err != nil || !reflect.DeepEqual(in.State.Todos, todosAfter2) {
		t.Fatalf("forked list: %+v, %v", in.State.Todos, err)
	}
}

// A round cut short after its todo_write finished keeps the call: resume
// commits the round with the list the call wrote, and does not run the
// call again.
func TestTodoListSurvivesAnInterruptedRound(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, todoAgent, todoScript)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "p", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventToolEnd && e.Round == 2 && e.Call.Tool == todoWriteName {
			cancel()
		}
	}})
	if err != nil || res.Status != StatusPaused {
		t.Fatalf("run: %+v, %v", res, err)
	}
	rec, err := store.Read("p")
	if err != nil || !rec.Interrupted() || len(rec.State.Todos) != 2 || rec.State.Todos[0].Status != checkpoint.TodoInProgress {
		t.Fatalf("at the boundary: %+v, %v", rec.State.Todos, err)
	}
	res, events := resume(t, eng, "p", StrategySeal)
	if res.Status != StatusDone {
		t.Fatalf("resume: %+v", res)
	}
	if rep := eventOf(events, EventAgentResumed); rep == nil || len(rep.Finished) == 0 {
		t.Fatalf("resume report: %+v", rep)
	}
	in, err := Inspect(t.Context(), store, "p")
	if err != nil || !reflect.DeepEqual(in.State.Todos, todosAfter2) {
		t.Fatalf("list after resume: %+v, %v", in.State.Todos, err)
	}
}
