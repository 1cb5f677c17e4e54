package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: `cairn run --fresh` on an agent whose last round was
// interrupted kept that round's staging, so the new agent's first call,
// of the same id, failed with "staging directory … is not empty" (a host
// path, read by the model); and it kept the old rounds' change records,
// so the new round 1's diff was the old round 1's. Starting afresh
// removes both.
func TestFreshRunForgetsTheOldRoundsStagingAndChanges(t *testing.T) {
	eng, _ := fileEngine(t)
	agent := `
name: fresh
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`
	write := func(content string) string {
		return "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: " + content + "}}]\n  - text: done\n"
	}
	af := agentIn(t, agent, write("old"))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "f", Prompt: "go"})
	must(t, err)
	if res.Status != StatusDone {
		t.Fatalf("first run: %+v", res)
	}
	// What a kill during the first round of a later run leaves.
	left := filepath.Join(eng.stagingRoot("f"), "round-1", "call_1_0")
	must(t, os.MkdirAll(left, 0o700))
	must(t, os.WriteFile(filepath.Join(left, "a.txt"), []byte("staged"), 0o600))

	af2 := agentIn(t, agent, write("new"))
	res, err = eng.Run(context.Background(), RunOptions{Agent: af2, ID: "f", Prompt: "again", Fresh: true})
	must(t, err)
	rec, err := eng.store.Read("f")
	must(t, err)
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool && m.IsError {
			t.Errorf("the fresh run's call failed: %q", m.Text)
		}
	}
	if res.Status != StatusDone {
		t.Fatalf("fresh run: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(af2.Dir, "workspace", "a.txt")); string(b) != "new" {
		t.Errorf("a.txt holds %q, want new", b)
	}
	_, changes, err := eng.Changes(context.Background(), "f", 1)
	must(t, err)
	if len(changes) != 1 || string(texts(t, changes[0])[1]) != "new" {
		t.Errorf("round 1's changes: %+v, want a.txt written new", changes)
	}
}
