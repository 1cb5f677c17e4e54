package host

import (
	"context"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a run journaled its start, told run_start, and only then
// journaled its prompt, so a kill -9 the moment run_start was seen left
// the agent with a run that had no prompt: resume asked the model with no
// user message, or an existing agent's new prompt was dropped without a
// word. The start and the prompt now go in one write, before run_start:
// whoever sees run_start finds the prompt in the journal.
func TestRunStartFindsThePromptJournaled(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	af := agentIn(t, "name: p\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [read_file]}]\nworkspace: workspace\n", "turns:\n  - text: done\n")
	for i, prompt := range []string{"the first prompt", "a second prompt"} {
		var tail []checkpoint.Record
		onEvent := func(e Event) {
			if e.Type != EventRunStart {
				return
			}
			// What a kill -9 now would leave: the journal as written.
			rec, err := store.Read("p")
			if err != nil {
				t.Errorf("run %d: read at run_start: %v", i, err)
				return
			}
			tail = rec.Tail
		}
		res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "p", Prompt: prompt, OnEvent: onEvent})
		if err != nil || res.Status != StatusDone {
			t.Fatalf("run %d: %v, %+v", i, err, res)
		}
		var found bool
		for _, r := range tail {
			found = found || r.Type == checkpoint.RecUser && r.Message != nil && r.Message.Text == prompt
		}
		if !found {
			t.Errorf("run %d: at run_start the journal's tail %v does not hold the prompt %q", i, types(tail), prompt)
		}
	}
}

func types(recs []checkpoint.Record) []checkpoint.RecordType {
	var ts []checkpoint.RecordType
	for _, r := range recs {
		ts = append(ts, r.Type)
	}
	return ts
}
