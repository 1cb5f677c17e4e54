package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn run` of an agent file whose context budget could not
// hold its system prompt and tools made the agent and failed its run (exit
// 1, the agent left failed in the store). It is refused as a bad agent
// file (exit 2), naming the line of the budget and what the prompt and
// tools take, and nothing is stored; a budget that the tools of a module
// file leave no room in, known once the module is read, is refused before
// anything is stored too (exit 1, as a grant the module asks for more than).
func TestContextBudgetTooSmallIsRefusedByRun(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns: [{text: hi}]\n"), 0o644))
	stats, err := os.ReadFile("../../examples/tools/textstats/textstats.wasm")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "textstats.wasm"), stats, 0o644))
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		must(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	const head = "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n"
	ok := write("ok.yaml", head+"tools: [{module: builtin}]\ncontext: {budget: 4000}\n")
	store := filepath.Join(dir, "store")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "ok", "-f", ok, "go"); code != exitDone {
		t.Fatalf("run with room: exit %d: %s", code, errOut)
	}

	small := write("small.yaml", head+"tools: [{module: builtin}]\ncontext:\n  policy: drop\n  budget: 1000\n")
	code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "small", "-f", small, "go")
	if code != exitUsage || !strings.Contains(errOut, "line 7: context budget too small: budget 1000") ||
		!strings.Contains(errOut, "the system prompt and the 6 tools' descriptions alone take about") {
		t.Fatalf("run of a budget too small for the built-in tools: exit %d: %s", code, errOut)
	}

	module := write("module.yaml", head+"system: Count words.\ntools: [{module: textstats.wasm, grant: {workspace: ro}}]\ncontext: {budget: 256}\n")
	code, _, errOut = cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "module", "-f", module, "go")
	if code != exitFailed || !strings.Contains(errOut, "module.yaml line 6: context budget too small: budget 256") {
		t.Fatalf("run of a budget too small for a module's tools: exit %d: %s", code, errOut)
	}

	_, out, _ := cairn(t, "ls", "--store", store)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "ok ") {
		t.Fatalf("ls after the refused runs:\n%s", out)
	}
}
