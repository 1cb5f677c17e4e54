package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a step agent's stored state removed while the step ran
// (rm -r of store/agents/FLOW.STEP) ended `cairn workflow run` with exit 5
// and "agent FLOW.STEP is held by another process", and `cairn workflow
// resume` then made the step again from its prompt, applying its change to
// the workspace a second time. A real cairn process runs a step whose
// agent appends a line, then spins; the test removes the agent's directory
// while it spins. The run fails saying the agent's stored state vanished
// (no other process), the resume fails the step saying its agent is gone
// and what it changed is unknown, without running it, and the line is in
// the workspace once; `--retry` makes the step anew.
func TestWorkflowStepAgentRemovedIsNotRunAgain(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := flowFiles(t, map[string]string{
		"flow.yaml": "name: g\nworkspace: ws\nsteps:\n  - {name: a, agent: a.yaml, prompt: go}\n",
		"a.yaml": "name: a\nmodel: {provider: script, script: script.yaml}\n" +
			"tools:\n  - {module: hostile.wasm, only: [append], grant: {workspace: rw}}\n" +
			"  - {module: hostile.wasm, only: [spin], limits: {timeout: 1s}}\n",
		"script.yaml": "turns:\n  - tool_calls: [{name: append, input: {path: log.txt, line: a-edit}}]\n" +
			"  - tool_calls: [{name: spin, input: {}}]\n  - text: a done\n",
	})
	hostileModule(t, bin, dir)
	store, cache := t.TempDir(), cacheForTests(t)
	run := exec.Command(bin, "workflow", "run", "--store", store, "--cache", cache, "--json", "--id", "g", filepath.Join(dir, "flow.yaml"))
	stdout, err := run.StdoutPipe()
	must(t, err)
	var stderr strings.Builder
	run.Stderr = &stderr
	must(t, run.Start())
	lines := bufio.NewScanner(stdout)
	for spinning := false; !spinning; {
		if !lines.Scan() {
			t.Fatalf("the run ended before the spin started: %v\n%s", run.Wait(), stderr.String())
		}
		spinning = strings.Contains(lines.Text(), `"tool_start"`) && strings.Contains(lines.Text(), `"spin"`)
	}
	must(t, os.RemoveAll(filepath.Join(store, "agents", "g.a")))
	for lines.Scan() {
	}
	err = run.Wait()
	if code := exitCodeOf(err); code != exitFailed || !strings.Contains(stderr.String(), "stored state vanished while it ran") ||
		strings.Contains(stderr.String(), "another process") || !strings.Contains(stderr.String(), "--retry a g") {
		t.Fatalf("run: exit %d\n%s\nwant exit %d saying g.a's stored state vanished, and how to retry", code, stderr.String(), exitFailed)
	}

	for range 2 {
		out, err := exec.Command(bin, "workflow", "resume", "--store", store, "--cache", cache, "g").CombinedOutput()
		if code := exitCodeOf(err); code != exitFailed || !strings.Contains(string(out), "stored state is gone") ||
			!strings.Contains(string(out), "is unknown") || strings.Contains(string(out), "step a (agent") {
			t.Fatalf("resume: exit %d\n%s\nwant exit %d, step a failed without starting, its agent gone", code, out, exitFailed)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "ws", "log.txt")); string(log) != "a-edit\n" {
		t.Fatalf("log.txt after the resumes: %q, want the step's line once", log)
	}
	out, err := exec.Command(bin, "workflow", "resume", "--retry", "a", "--store", store, "--cache", cache, "g").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "workflow g done") {
		t.Fatalf("resume --retry a: %v\n%s", err, out)
	}
}

// exitCodeOf is the exit code of a command that ended with err.
func exitCodeOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
