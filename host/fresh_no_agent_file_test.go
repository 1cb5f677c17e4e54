package host

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Regression: Run of an agent that exists with Fresh and no agent file
// failed with ErrNoAgentFile alone, whose message says to name an agent
// that exists, which it did. It says Fresh makes the agent anew from
// RunOptions.Agent, and changes nothing.
func TestFreshWithoutAnAgentFileSaysSo(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, "name: f\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns:\n  - text: done\n")
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "f", Prompt: "go"})
	must(t, err)
	before, err := store.Read("f")
	must(t, err)
	_, err = eng.Run(context.Background(), RunOptions{ID: "f", Prompt: "again", Fresh: true})
	if !errors.Is(err, ErrNoAgentFile) || !strings.Contains(err.Error(), `start agent "f" afresh: Fresh makes it anew from RunOptions.Agent`) {
		t.Fatalf("Fresh without an agent file: %v", err)
	}
	after, err := store.Read("f")
	must(t, err)
	if after.State.Round != before.State.Round || len(after.State.Runs) != len(before.State.Runs) {
		t.Fatalf("the refused run changed the agent: round %d, %d runs; was %d, %d",
			after.State.Round, len(after.State.Runs), before.State.Round, len(before.State.Runs))
	}
}
