package main

import (
	"strings"
	"testing"
)

// `cairn fork --as ID` of an id the store has exited 1, as if the fork
// had failed, and `cairn snapshot --label L` of a label no bookmark can
// have exited 1 too, where a wrong command line exits 2, as `cairn import`
// of an agent the store has and `cairn fork --as` of an id no agent can
// have do. Both exit 2, saying what to give instead.
func TestForkAsAnExistingAgentAndABadLabelAreUsageErrors(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	for _, id := range []string{"a", "b"} {
		if code, _, errOut := cairn(t, append(append([]string{"run", "--id", id}, args...), "hi")...); code != 0 {
			t.Fatalf("run %s: exit %d, %s", id, code, errOut)
		}
	}
	code, _, errOut := cairn(t, "fork", "--store", store, "a", "--as", "b")
	if code != exitUsage || !strings.Contains(errOut, "already exists") || !strings.Contains(errOut, "--as") {
		t.Errorf("fork --as an agent the store has: exit %d, %s; want 2, naming --as", code, errOut)
	}
	code, _, errOut = cairn(t, "snapshot", "--store", store, "a", "--label", "x y")
	if code != exitUsage || !strings.Contains(errOut, `"x y"`) {
		t.Errorf("snapshot --label \"x y\": exit %d, %s; want 2", code, errOut)
	}
}
