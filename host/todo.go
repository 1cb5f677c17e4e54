package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/internal/view"
)

// The task list: an agent file with `todos: true` gives the model the
// todo_write tool, with which it writes its plan as a list of at most 100
// items, each pending, in_progress or done. Each call replaces the whole
// list. The list is part of the agent's state: it changes when the call's
// round commits (a round cut short by a crash leaves the list as it was at
// the boundary, and resume keeps the call's result and so its list), is
// restored by resume and copied by fork, and is shown by `cairn show`. A
// sub-agent's list is its own.

// todoWriteName is the task list's tool's name.
const todoWriteName = "todo_write"

const todoSchema = `{"type":"object","required":["todos"],"additionalProperties":false,` +
	`"properties":{"todos":{"type":"array","maxItems":100,"items":{"type":"object","required":["content","status"],` +
	`"additionalProperties":false,"properties":{"content":{"type":"string","minLength":1,"maxLength":1000},` +
	`"status":{"enum":["pending","in_progress","done"]}}}}}}`

// todoTools gives an agent file that asks for it the task list's tool.
func todoTools(af *AgentFile) ([]nativeTool, error) {
	if !af.Todos {
		return nil, nil
	}
	return []nativeTool{todoWrite{}}, nil
}

type todoWrite struct{}

func (todoWrite) Spec() model.Tool {
	return model.Tool{Name: todoWriteName, InputSchema: json.RawMessage(todoSchema),
		Description: "Write your plan as a task list, replacing the one you wrote before: every item with its status " +
			"(pending, in_progress or done). Keep it current as you work; it is kept with your state."}
}

func (todoWrite) Call(_ context.Context, c *nativeCall) (nativeResult, error) {
	var in struct {
		Todos []checkpoint.Todo `json:"todos"`
	}
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return nativeResult{}, fmt.Errorf("%s: %w", todoWriteName, err)
	}
	list := &checkpoint.TodoList{Items: in.Todos}
	if list.Items == nil {
		list.Items = []checkpoint.Todo{}
	}
	return nativeResult{Output: "The task list now reads:\n" + view.FormatTodos(list.Items), Todos: list}, nil
}

// emitTodos emits, once the round committed, the task list a call of it
// wrote.
func (r *run) emitTodos(round int, results []callResult) {
	for _, res := range results {
		if res.native != nil && res.native.Todos != nil {
			r.emit(Event{Type: EventTodos, Round: round, Todos: r.state().Todos})
			return
		}
	}
}
