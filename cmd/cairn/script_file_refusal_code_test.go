package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a script model file that does not read as a script (turns:
// 5) made `cairn run` exit 1, as if the run had failed, where an agent
// file that does not read exits 2. It exits 2 naming the file and its
// line, for run and for a resume given it with --model; no agent is made,
// and the agent a resume is refused for stays as it was.
func TestScriptFileNotReadingExitsTwo(t *testing.T) {
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"# a script\nturns: 5\n")
	script := filepath.Join(filepath.Dir(agentFile), "script.yaml")
	const want = "script.yaml: script: line 2: want a list, found `5`"
	code, out, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "go")
	if code != exitUsage || !strings.Contains(errOut, want) {
		t.Fatalf("run: exit %d\n%s%s; want exit %d saying %s", code, out, errOut, exitUsage, want)
	}
	for _, f := range storedFiles(t, store) {
		if !strings.Contains(f, "blobs") {
			t.Errorf("run: stored %s", f)
		}
	}

	good := filepath.Join(filepath.Dir(agentFile), "good.yaml")
	must(t, os.WriteFile(good, []byte("turns:\n  - text: hi\n"), 0o644))
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "--model", "script:"+good, "go"); code != exitDone {
		t.Fatalf("run with a good script: exit %d: %s", code, errOut)
	}
	before, err := os.ReadFile(filepath.Join(store, "agents", "a", "committed"))
	must(t, err)
	code, out, errOut = cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "--model", "script:"+script, "a")
	if code != exitUsage || !strings.Contains(errOut, want) {
		t.Fatalf("resume: exit %d\n%s%s; want exit %d saying %s", code, out, errOut, exitUsage, want)
	}
	after, err := os.ReadFile(filepath.Join(store, "agents", "a", "committed"))
	must(t, err)
	if string(before) != string(after) {
		t.Errorf("resume changed the agent's committed mark: %q, was %q", after, before)
	}
}
