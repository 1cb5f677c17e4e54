package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: an agent starts watching a file when a call of its round
// reads it, at the round's settlement. A change another agent sharing the
// workspace made between the call's read and that moment (a sibling
// sub-agent, a workflow's parallel step) had no event to be seen by, so
// the agent was never told of it while it ran: the model went on with
// what it had read. A newly tracked file is now compared with the
// workspace at the next round, as the files changed outside are.
func TestAFileChangedBetweenTheReadAndItsRecordIsToldAtTheNextRound(t *testing.T) {
	eng, _ := fileEngine(t)
	reader := agentIn(t, `
name: reader
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [echo, readwait], grant: {workspace: ro}}]
sandbox: {timeout: 10s}
`, `
turns:
  - tool_calls: [{name: echo, input: {text: ready, n: 1}}]
  - tool_calls: [{name: readwait, input: {path: notes.txt}}]
  - tool_calls: [{name: echo, input: {text: next, n: 1}}]
  - text: read
`)
	copyFile(t, hostileWasm, filepath.Join(reader.Dir, "hostile.wasm"))
	writer := siblingWriter(t, false)
	ws := reader.WorkspaceDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("the first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var told []string
	var read string
	res, err := runBesideWriter(t, eng, RunOptions{Agent: reader, ID: "reader", Prompt: "read", OnEvent: func(e Event) {
		switch {
		case e.Type == EventFilesChanged:
			told = append(told, e.Text)
		case e.Type == EventToolEnd && e.Call.Tool == "readwait":
			read = e.Call.Output
		}
	}}, "readwait", writer)
	if err != nil || res.Status != StatusDone || res.Text != "read" {
		t.Fatalf("reader: %+v, %v", res, err)
	}
	if read != "the first\n" {
		t.Fatalf("the call read %q, not the file as it was before the writer's change", read)
	}
	if len(told) != 1 || !strings.Contains(told[0], "notes.txt") {
		t.Fatalf("the reader was told %q; want notes.txt changed outside it, at its next round", told)
	}
}
