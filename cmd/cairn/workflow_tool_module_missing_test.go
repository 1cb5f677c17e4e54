package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a workflow's tool step whose module is not there was
// refused with "fix the agent file, or make it", though a tool step has no
// agent file: its module is named by the step's module: in the workflow
// file. The refusal says so, both when the workflow starts and when a
// resume would start the step after the module went away; nothing is
// stored by the first, and the second leaves the workflow as it was.
func TestWorkflowToolStepMissingModuleAdvisesTheWorkflowFile(t *testing.T) {
	dir := flowFiles(t, map[string]string{
		"reader.yaml": "name: reader\nmodel: {provider: script, script: read.yaml}\n" +
			"tools: [{module: builtin, only: [read_file]}]\nlimits: {max_rounds: 1}\n",
		"read.yaml": "turns:\n  - tool_calls: [{name: read_file, input: {path: notes.md}}]\n" +
			"  - tool_calls: [{name: read_file, input: {path: notes.md}}]\n  - text: done reading\n",
		"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: one, agent: reader.yaml, prompt: go}\n" +
			"  - {name: stats, needs: [one], tool: text_stats, module: stats.wasm, grant: {workspace: ro}, input: {path: notes.md}}\n",
	})
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	flow := filepath.Join(dir, "flow.yaml")
	advised := func(errOut string) bool {
		return strings.Contains(errOut, "tool module stats.wasm") && strings.Contains(errOut, "module: in the workflow file") &&
			!strings.Contains(errOut, "agent file")
	}
	code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", flow}, flags...)...)
	if code != exitUsage || !advised(errOut) || !strings.Contains(errOut, "line 5: step stats") {
		t.Fatalf("run with the module missing: exit %d, %s; want exit %d naming the step's line and its module: in the workflow file", code, errOut, exitUsage)
	}
	wasm, err := os.ReadFile("../../examples/tools/textstats/textstats.wasm")
	must(t, err)
	writeIn(t, dir, "stats.wasm", string(wasm))
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", flow}, flags...)...); code != exitPaused {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	must(t, os.Remove(filepath.Join(dir, "stats.wasm")))
	code, _, errOut = cairn(t, append([]string{"workflow", "resume", "--max-rounds", "5", "wf"}, flags...)...)
	if code != exitUsage || !advised(errOut) {
		t.Fatalf("resume with the module gone: exit %d, %s; want exit %d naming the step's module: in the workflow file", code, errOut, exitUsage)
	}
}
