package main

import (
	"strings"
	"testing"
)

// Regression: once `cairn undo` had taken back every round this node
// kept, `cairn diff` with no round showed round 25, the last the store's
// pasts say changed a file, as if it stood, though undo had taken it
// back. It says that undo took back every round kept and how to see one
// as it ran; a round named with --round is shown as before.
func TestDiffAfterUndoTookBackEveryRoundKeptDoesNotShowAnUndoneRound(t *testing.T) {
	t.Parallel()
	store, _ := gcRoundsAgent(t)
	for want := 25; want > 15; want-- {
		if code, out, errOut := cairnProcess(t, "undo", "--store", store, "w"); code != exitDone || !strings.Contains(out, "undid round "+itoa(want)) {
			t.Fatalf("undo: exit %d %q %s; want round %d", code, out, errOut, want)
		}
	}
	code, out, errOut := cairnProcess(t, "diff", "--store", store, "w")
	if code != exitFailed || strings.Contains(out, "round 25") || !strings.Contains(errOut, "undo took back") || !strings.Contains(errOut, "cairn diff --round N w") {
		t.Fatalf("diff after every kept round was undone: exit %d %q %s", code, out, errOut)
	}
	if code, out, errOut := cairnProcess(t, "diff", "--store", store, "--round", "25", "w"); code != exitDone || !strings.Contains(out, "round 25") {
		t.Fatalf("diff --round 25: exit %d %q %s", code, out, errOut)
	}
}
