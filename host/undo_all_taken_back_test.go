package host

import (
	"errors"
	"strings"
	"testing"
)

// Regression: once undo had taken back every round this node kept, the
// next undo said "none of its last 10 rounds changed a file", though they
// had: it says undo took them back. An agent that never changed a file
// is still told that none of its rounds did.
func TestUndoPastTheLastRoundKeptSaysUndoTookThemBack(t *testing.T) {
	af := agentIn(t, poolAgent, `turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: one}}]
  - tool_calls: [{name: write_file, input: {path: a.txt, content: two}}]
  - text: done
`)
	eng, _ := fileEngine(t)
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "twice", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	for _, want := range []int{2, 1} {
		if u, err := eng.Undo(t.Context(), "twice"); err != nil || u.Round != want {
			t.Fatalf("undo: %+v, %v; want round %d", u, err, want)
		}
	}
	_, err := eng.Undo(t.Context(), "twice")
	if !errors.Is(err, ErrNoChanges) || !strings.Contains(err.Error(), "undo took back") || strings.Contains(err.Error(), "none of its last") {
		t.Fatalf("undo past the rounds kept: %v", err)
	}

	quiet := agentIn(t, poolAgent, "turns:\n  - text: done\n")
	if res, err := eng.Run(t.Context(), RunOptions{Agent: quiet, ID: "quiet", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if _, err := eng.Undo(t.Context(), "quiet"); !errors.Is(err, ErrNoChanges) || !strings.Contains(err.Error(), "none of its last 10 rounds changed a file") {
		t.Fatalf("undo of an agent that changed no file: %v", err)
	}
}
