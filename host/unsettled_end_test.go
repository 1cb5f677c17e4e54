package host

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Regression: a run stopped gracefully (a signal, a pause) while a call of
// the round still ran told the finished calls' tool_end with outcome ok,
// changes and all, though the round had not settled them, and a resume
// could yet refuse them (the file changed meanwhile): the model then read
// that they did not reach the workspace. Such a call ends "unsettled"; a
// call that changed nothing ends ok.
func TestStoppedRoundTellsStagedCallsUnsettled(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: unsettled
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file, read_file]}
  - {module: hostile.wasm, only: [spin]}
sandbox: {timeout: 30s}
`, `turns:
  - tool_calls:
      - {name: write_file, input: {path: out.txt, content: staged}}
      - {name: read_file, input: {path: in.txt}}
      - {name: spin, input: {}}
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	must(t, os.WriteFile(filepath.Join(af.Dir, "workspace", "in.txt"), []byte("in"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	ends := map[string]Outcome{}
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "u", Prompt: "go", OnEvent: func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Type == EventToolStart && e.Call.Tool == "spin":
			time.AfterFunc(500*time.Millisecond, cancel) // the other two have finished
		case e.Type == EventToolEnd:
			ends[e.Call.ID] = e.Call.Outcome
		}
	}})
	must(t, err)
	mu.Lock()
	defer mu.Unlock()
	if res.Status != StatusPaused || ends["call_1_0"] != OutcomeUnsettled || ends["call_1_1"] != OutcomeOK {
		t.Fatalf("status %s, tool_end outcomes %v; want paused, the write unsettled, the read ok", res.Status, ends)
	}
}
