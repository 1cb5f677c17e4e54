package main

import (
	"strings"
	"testing"
)

// Regression: a run paused at its max_rounds ended "continue with `cairn
// resume ID`", which stops at the same limit at once. The advice names the
// flag that raises it, and following it (N given) finishes the task.
func TestLimitPauseAdvisesTheFlagThatRaisesIt(t *testing.T) {
	list := "  - tool_calls: [{name: list_dir, input: {path: .}}]\n"
	agentFile, store := scriptAgent(t, `name: lim
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_rounds: 2}
`, "turns:\n"+list+list+list+"  - text: listed\n")
	code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lim", "-f", agentFile, "go")
	advice := "`cairn resume lim --max-rounds N`"
	if code != exitPaused || !strings.HasSuffix(strings.TrimSpace(errOut), advice) || strings.Contains(errOut, "continue with `cairn resume lim`") {
		t.Fatalf("run: exit %d: %s\nwant it to end with %s", code, errOut, advice)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "lim", "--max-rounds", "5"); code != exitDone {
		t.Fatalf("resume with the advised flag: exit %d: %s", code, errOut)
	}
}
