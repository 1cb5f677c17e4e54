package host

import (
	"context"
	"sync"
	"testing"
	"time"
)

// siblingWriter is an agent that writes notes.txt with the built-in
// tools, then (with done) done.txt: what another agent sharing the
// workspace does while a call reads or changes notes.txt.
func siblingWriter(t *testing.T, done bool) *AgentFile {
	t.Helper()
	turns := "turns:\n  - tool_calls: [{name: write_file, input: {path: notes.txt, content: \"the second version\\n\"}}]\n"
	if done {
		turns += "  - tool_calls: [{name: write_file, input: {path: done.txt, content: \"done\\n\"}}]\n"
	}
	return agentIn(t, "name: writer\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		turns+"  - text: wrote\n")
}

// runBesideWriter runs opts and, a second after its first call of tool
// starts, writer in the same workspace, and returns opts' run's result
// once both have ended. The tool's call is one that waits for the
// writer's change (the hostile module's readwait, appendwait).
func runBesideWriter(t *testing.T, eng *Engine, opts RunOptions, tool string, writer *AgentFile) (*Result, error) {
	t.Helper()
	ws, err := workspaceOf(opts.Agent, opts.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var once sync.Once
	onEvent := opts.OnEvent
	opts.OnEvent = func(e Event) {
		if onEvent != nil {
			onEvent(e)
		}
		if e.Type != EventToolStart || e.Call.Tool != tool {
			return
		}
		once.Do(func() {
			wg.Go(func() {
				time.Sleep(time.Second)
				res, err := eng.Run(context.Background(), RunOptions{Agent: writer, ID: "writer", Workspace: ws, Prompt: "write"})
				if err != nil || res.Status != StatusDone {
					t.Errorf("writer: %+v, %v", res, err)
				}
			})
		})
	}
	res, err := eng.Run(context.Background(), opts)
	wg.Wait()
	return res, err
}
