package main

import (
	"strings"
	"testing"
)

// Regression: `cairn diff --round N` of a round that changed no file (the
// agent's answer, round 26 here) was refused as a round whose changes are
// not kept, "kept: the last 10 rounds that changed files", though the
// store's pasts keep that round and say it changed nothing. It is refused
// saying so, with exit 2 as before; the diff of a round the agent never
// had is refused as such.
func TestDiffOfARoundThatChangedNoFileSaysItChangedNone(t *testing.T) {
	t.Parallel()
	store, _ := gcRoundsAgent(t)
	code, out, errOut := cairnProcess(t, "diff", "--store", store, "--round", "26", "w")
	if code != exitUsage || !strings.Contains(errOut, `agent "w" round 26`) || !strings.Contains(errOut, "the store's pasts say it changed no file") ||
		strings.Contains(errOut, "kept: the last 10") {
		t.Fatalf("diff of round 26: exit %d %q %s", code, out, errOut)
	}
	if code, _, errOut := cairnProcess(t, "diff", "--store", store, "--round", "27", "w"); code != exitUsage || !strings.Contains(errOut, "has no round 27") {
		t.Fatalf("diff of round 27: exit %d %s", code, errOut)
	}
}
