package host

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Two agents of one process that share a workspace (a parent's
// sub-agents, a workflow's steps) write the same file round after round.
// Each round's changes are checked against the workspace, journaled, then
// applied; another agent's apply between the check and this one's made
// the apply fail and with it the run ("apply the changes of call …:
// workspace changed under the call's effects"). The check and the apply
// now hold the workspace: a change that lost the race is refused at the
// check, and the model is told.
func TestAgentsSharingAWorkspaceNeverFailOnEachOthersChanges(t *testing.T) {
	eng, _ := fileEngine(t)
	ws := t.TempDir()
	const rounds = 40
	agents := map[string]*AgentFile{}
	for _, id := range []string{"a", "b"} {
		var script strings.Builder
		script.WriteString("turns:\n")
		for i := range rounds {
			fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: notes.txt, content: %s%d}}]\n", id, i)
		}
		script.WriteString("  - text: done\n")
		agents[id] = agentIn(t, `
name: writer
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, script.String())
	}
	var wg sync.WaitGroup
	results := map[string]*Result{}
	errs := map[string]error{}
	var mu sync.Mutex
	for id, af := range agents {
		wg.Go(func() {
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: id, Workspace: ws, Prompt: "write"})
			mu.Lock()
			results[id], errs[id] = res, err
			mu.Unlock()
		})
	}
	wg.Wait()
	for id := range agents {
		if errs[id] != nil || results[id].Status != StatusDone {
			t.Errorf("agent %s: %+v, %v", id, results[id], errs[id])
		}
	}
}
