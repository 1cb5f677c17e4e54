package host

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/host/model"
)

// settleCounter is a native tool whose results carry an effect: it counts
// how often each call's effect is settled.
type settleCounter struct {
	mu      sync.Mutex
	settled map[string]int
}

func (s *settleCounter) Spec() model.Tool {
	return model.Tool{Name: "remember", Description: "remembers", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (s *settleCounter) Call(_ context.Context, c *nativeCall) (nativeResult, error) {
	return nativeResult{Output: "noted", Effect: []byte(c.Call.ID)}, nil
}

func (s *settleCounter) Settle(_ context.Context, c *nativeCall, effect []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settled[string(effect)]++
	return nil
}

// withNative offers nt to every agent for the length of the test.
func withNative(t *testing.T, nt nativeTool) {
	saved := natives
	natives = append(append([]func(*AgentFile) ([]nativeTool, error){}, natives...),
		func(*AgentFile) ([]nativeTool, error) { return []nativeTool{nt}, nil })
	t.Cleanup(func() { natives = saved })
}

const settleScript = `
turns:
  - tool_calls:
      - {name: remember, input: {}}
      - {name: write_file, input: {path: a.txt, content: a}}
  - text: done
`

// A native call's effect is settled once its result is durable, before
// the round commits: once in a run, and once when a stop after the result
// leaves the settlement to resume.
func TestNativeEffectSettledOnce(t *testing.T) {
	for _, stop := range []bool{false, true} {
		t.Run(map[bool]string{false: "run", true: "stopped"}[stop], func(t *testing.T) { settleOnce(t, stop) })
	}
}

func settleOnce(t *testing.T, stop bool) {
	sc := &settleCounter{settled: map[string]int{}}
	withNative(t, sc)
	eng, _ := fileEngine(t)
	af := agentIn(t, "name: n\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n", settleScript)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "n", Prompt: "go", OnEvent: func(e Event) {
		if stop && e.Type == EventToolEnd && e.Call.Tool == "remember" {
			cancel()
		}
	}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if stop && res.Status == StatusPaused {
		// Stopped before the settlement, or after it and before the
		// commit: resume settles what is left, once.
		res, _ = resume(t, eng, "n", StrategySeal)
	}
	if res.Status != StatusDone || len(sc.settled) != 1 || sc.settled["call_1_0"] != 1 {
		t.Fatalf("stop %v: %+v, settled %v; want call_1_0 settled once", stop, res, sc.settled)
	}
}
