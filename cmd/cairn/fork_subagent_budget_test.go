package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fork of a sub-agent, resumed, was stopped by the token
// budget of the tree its source was in ("the tree of lead reached
// max_tokens"), which does not count the fork and which the fork's own
// --max-tokens could not raise, and was told to resume lead, whose resume
// never touches the fork: it could not go on at all. A fork is the top of
// a tree of its own, bound by its own limits. The lead's budget lets
// alpha begin its round after the lead's turn (268 tokens, counted as it
// is answered) and is spent by it.
func TestForkOfASubAgentIsBoundByItsOwnLimits(t *testing.T) {
	flags, mine := forkOfASubAgent(t, "limits: {max_tokens: 280}\n")
	code, out, errOut := cairn(t, append([]string{"resume", "mine"}, flags...)...)
	if code != exitApproval || strings.Contains(out+errOut, "the tree of lead") || strings.Contains(out+errOut, "resume lead") {
		t.Fatalf("resume of the fork: exit %d\n%s%s\nwant it to go on, bound by its own limits, to its call that waits for approval", code, out, errOut)
	}
	if code, out, errOut := cairn(t, append([]string{"approve", "mine", "call_1_0"}, flags...)...); code != exitDone {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cairn(t, append([]string{"resume", "mine"}, flags...)...); code != exitDone {
		t.Fatalf("resume of the fork after the approval: exit %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(mine, "a.txt")); err != nil || string(b) != "x" {
		t.Errorf("the fork's approved call: a.txt %q, %v", b, err)
	}
}
