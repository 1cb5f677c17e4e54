package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a run paused at its max_rounds ended "continue with `cairn
// resume ID`", which stops at the same limit at once. The advice names the
// flag that raises it, and following it (N given) finishes the task.
func TestLimitPauseAdvisesTheFlagThatRaisesIt(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	list := "  - tool_calls: [{name: list_dir, input: {path: .}}]\n"
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns:\n"+list+list+list+"  - text: listed\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: lim
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_rounds: 2}
`), 0o644))
	store := filepath.Join(dir, "store")
	code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "lim", "-f", filepath.Join(dir, "agent.yaml"), "go")
	advice := "`cairn resume lim --max-rounds N`"
	if code != exitPaused || !strings.HasSuffix(strings.TrimSpace(errOut), advice) || strings.Contains(errOut, "continue with `cairn resume lim`") {
		t.Fatalf("run: exit %d: %s\nwant it to end with %s", code, errOut, advice)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "lim", "--max-rounds", "5"); code != exitDone {
		t.Fatalf("resume with the advised flag: exit %d: %s", code, errOut)
	}
}
