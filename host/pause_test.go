package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

const pauseScript = `
turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: one}}]
  - tool_calls: [{name: write_file, input: {path: b.txt, content: two}}]
  - tool_calls: [{name: write_file, input: {path: c.txt, content: three}}]
  - text: done
`

func pauseAgent(t *testing.T) *AgentFile {
	return agentIn(t, `
name: steps
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, pauseScript)
}

// A pause requested while round 1 runs stops the run after round 1
// commits, before the model is asked again: it ends paused on request,
// the request is cleared, and resume takes the rounds that remain.
func TestPauseStopsAtTheNextBoundary(t *testing.T) {
	for name, newStore := range map[string]func(t *testing.T) checkpoint.Store{
		"file":   func(t *testing.T) checkpoint.Store { _, s := fileEngine(t); return s },
		"memory": func(*testing.T) checkpoint.Store { return checkpoint.NewMemStore() },
	} {
		t.Run(name, func(t *testing.T) {
			store := newStore(t)
			eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
			must(t, err)
			defer eng.Close(context.Background())
			af := pauseAgent(t)
			var pauseErr error
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "steps", Prompt: "go", OnEvent: func(e Event) {
				if e.Type == EventToolStart && e.Round == 1 {
					pauseErr = eng.Pause(context.Background(), "steps")
				}
			}})
			must(t, err)
			must(t, pauseErr)
			if res.Status != StatusPaused || res.Reason != pausedOnRequest || res.Rounds != 1 {
				t.Fatalf("run: %+v", res)
			}
			if asked, _ := store.(checkpoint.Pauser).PauseRequested("steps"); asked {
				t.Fatal("the obeyed request was left in the store")
			}
			if _, err := os.Stat(filepath.Join(af.Dir, "workspace", "b.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("round 2 ran after the pause: %v", err)
			}
			res, err = eng.Resume(context.Background(), ResumeOptions{ID: "steps"})
			must(t, err)
			if res.Status != StatusDone || res.Rounds != 4 {
				t.Fatalf("resume: %+v", res)
			}
			err = eng.Pause(context.Background(), "steps")
			if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "is done") {
				t.Fatalf("pause of a done agent: %v", err)
			}
		})
	}
}

// Pause of an agent nobody runs says so and records nothing, so that no
// later run stops for it; an unknown agent is not found.
func TestPauseOfAnAgentNobodyRuns(t *testing.T) {
	eng, store := fileEngine(t)
	af := pauseAgent(t)
	af.Limits.MaxRounds = 1
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "steps", Prompt: "go"})
	must(t, err)
	if res.Status != StatusPaused {
		t.Fatalf("run: %+v", res)
	}
	err = eng.Pause(context.Background(), "steps")
	if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "is paused") {
		t.Fatalf("pause of a paused agent: %v", err)
	}
	if asked, _ := store.(checkpoint.Pauser).PauseRequested("steps"); asked {
		t.Fatal("a refused pause left a request")
	}
	if err := eng.Pause(context.Background(), "nobody"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("pause of an unknown agent: %v", err)
	}
}

// A request no run obeyed (made as the last run ended) does not stop the
// next run: a run clears it as it starts.
func TestStaleRequestClearedAtStart(t *testing.T) {
	eng, store := fileEngine(t)
	af := pauseAgent(t)
	af.Limits.MaxRounds = 1
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "steps", Prompt: "go"})
	must(t, err)
	must(t, store.(checkpoint.Pauser).RequestPause("steps"))
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "steps", Limits: RunLimits{MaxRounds: 10}})
	must(t, err)
	if res.Status != StatusDone {
		t.Fatalf("resume after a stale request: %+v", res)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
