package host

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// endsOnSecondLook is a context that is live the first time its Err is
// asked for (Decide's check on entry) and cancelled from then on: the
// person who waits gives up while the decision waits for the run.
type endsOnSecondLook struct {
	context.Context
	looks int
}

func (c *endsOnSecondLook) Err() error {
	if c.looks++; c.looks > 1 {
		return context.Canceled
	}
	return nil
}

// A decision made while the run's round still runs another call beside
// the one to decide waits for the run, and, when it gives up (here the
// person stops waiting; after decideRunWait alike), says what it waited
// for, the call still running and the one awaiting the decision, and how
// to decide it once the run stops, where it said after 2 s only that the
// agent was running.
func TestDecisionWhileTheRoundRunsAnotherCallSaysWhatItWaitsFor(t *testing.T) {
	af := agentIn(t, `
name: ask
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [spin], grant: {workspace: ro}}
sandbox: {timeout: 60s}
approvals: [{tool: write_file, action: ask}]
`, `
turns:
  - tool_calls:
      - {name: write_file, input: {path: out.txt, content: approved}}
      - {name: spin, input: {}}
  - text: finished
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	eng, _ := fileEngine(t)
	ctx, stop := context.WithCancel(context.Background())
	spins, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := eng.Run(ctx, RunOptions{Agent: af, ID: "v", Prompt: "go", OnEvent: func(e Event) {
			if e.Type == EventToolStart && e.Call.ID == "call_1_1" {
				close(spins)
			}
		}})
		ended <- err
	}()
	<-spins
	err := eng.Decide(&endsOnSecondLook{Context: context.Background()}, "v", "call_1_0", Decision{Approved: true})
	stop()
	<-ended
	if !errors.Is(err, checkpoint.ErrLocked) || !strings.Contains(err.Error(), "call_1_1 (spin) beside call_1_0") ||
		!strings.Contains(err.Error(), "`cairn show v`") || !strings.Contains(err.Error(), "`cairn approve`") {
		t.Fatalf("a decision given up while spin ran: %v\nwant it to name spin, still running, and say how to decide later", err)
	}
}
