package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDelegate runs, on a file store, a parent whose one round calls
// one tool and then answers: todo_write (carried out in the host), or a
// delegation to a child that answers at once. The difference is what a
// delegation costs: a durable agent made, locked, run for one round and
// read back.
func BenchmarkDelegate(b *testing.B) {
	for _, c := range []struct{ name, call string }{
		{todoWriteName, `{name: todo_write, input: {todos: [{content: x, status: done}]}}`},
		{delegateName, `{name: delegate, input: {agent: quick, task: answer}}`},
	} {
		af := benchTeam(b, c.call)
		b.Run(c.name, func(b *testing.B) {
			eng, _ := fileEngine(b)
			for i := range b.N {
				res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: fmt.Sprintf("p%d", i), Prompt: "go"})
				if err != nil || res.Status != StatusDone {
					b.Fatalf("run: %+v, %v", res, err)
				}
			}
		})
	}
}

func benchTeam(b *testing.B, call string) *AgentFile {
	agent := `
name: p
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
todos: true
agents:
  - name: quick
    description: answers
    model: {provider: script, script: quick.yaml}
    tools: [{module: builtin, only: [read_file]}]
`
	af := agentIn(b, agent, "turns:\n  - tool_calls: ["+call+"]\n  - text: done\n")
	if err := os.WriteFile(filepath.Join(af.Dir, "quick.yaml"), []byte("turns:\n  - text: answered\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return af
}
