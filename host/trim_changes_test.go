package host

import (
	"fmt"
	"strings"
	"testing"
)

// TestKeptChangesTrimmed: an agent that changes a file in more rounds than
// keepRounds, with rounds that change nothing between them, keeps the
// changes of its last keepRounds rounds that made any.
func TestKeptChangesTrimmed(t *testing.T) {
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := range keepRounds + 3 {
		fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: f%d.txt, content: x}}]\n", i)
		script.WriteString("  - tool_calls: [{name: read_file, input: {path: f0.txt}}]\n")
	}
	script.WriteString("  - text: done\n")
	af := agentIn(t, `
name: trim
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file, read_file]}]
`, script.String())
	res, _ := collect(t, RunOptions{Agent: af, ID: "trim", Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	rounds := changedRounds(testEngine.changesRoot("trim"))
	want := make([]int, 0, keepRounds)
	for i := 3; i < keepRounds+3; i++ {
		want = append(want, 2*i+1)
	}
	if fmt.Sprint(rounds) != fmt.Sprint(want) {
		t.Errorf("kept changes of rounds %v, want %v", rounds, want)
	}
}
