package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Regression: a resume of a failed workflow wrote nothing until its first
// step completed. While it ran, `cairn workflow ls` said failed, and after
// it was killed with SIGKILL, `workflow show` and `ls` still said failed,
// with the cause of the run before, where the docs say interrupted. A real
// cairn process resumes a failed workflow whose first step to run spins;
// while it spins ls says running, and once it is killed show and ls say
// interrupted, with no old cause.
func TestKilledWorkflowResumeShownInterrupted(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := flowFiles(t, map[string]string{"flow.yaml": "name: k\nworkspace: ws\nmax_parallel: 1\nsteps:\n" +
		"  - {name: read, tool: read_file, module: builtin, input: {path: missing.md}}\n" +
		"  - {name: spin, tool: spin, module: hostile.wasm, input: {}}\n"})
	hostileModule(t, bin, dir)
	store, cache := t.TempDir(), cacheForTests(t)
	// One step at a time: read fails, and spin never starts.
	if out, err := exec.Command(bin, "workflow", "run", "--store", store, "--cache", cache, "--id", "k",
		filepath.Join(dir, "flow.yaml")).CombinedOutput(); !strings.Contains(string(out), "workflow k failed") {
		t.Fatalf("run: %v\n%s; want it failed at step read", err, out)
	}
	if status, reason := shownStatus(t, bin, store, "k"); status != "failed" || !strings.Contains(reason, "missing.md") {
		t.Fatalf("after the run: %s (%s)", status, reason)
	}

	// Two at a time: read fails again while spin spins.
	resume := exec.Command(bin, "workflow", "resume", "--store", store, "--cache", cache, "--json", "--parallel", "2", "k")
	stdout, err := resume.StdoutPipe()
	must(t, err)
	must(t, resume.Start())
	defer resume.Process.Kill()
	lines := bufio.NewScanner(stdout)
	for spinning := false; !spinning; {
		if !lines.Scan() {
			t.Fatalf("the resume ended before step spin's call started: %v", resume.Wait())
		}
		spinning = strings.Contains(lines.Text(), `"tool_start"`) && strings.Contains(lines.Text(), `"agent":"k.spin"`)
	}
	ls, err := exec.Command(bin, "workflow", "ls", "--store", store).Output()
	if err != nil || !strings.Contains(string(ls), " running ") {
		t.Errorf("ls while the resume runs: %v\n%s; want k running", err, ls)
	}
	must(t, resume.Process.Signal(syscall.SIGKILL))
	resume.Wait()

	if status, reason := shownStatus(t, bin, store, "k"); status != "interrupted" || reason != "" {
		t.Errorf("show after the resume was killed: %s (%s); want interrupted, with no reason", status, reason)
	}
	ls, err = exec.Command(bin, "workflow", "ls", "--store", store).Output()
	if err != nil || !strings.Contains(string(ls), " interrupted ") {
		t.Errorf("ls after the resume was killed: %v\n%s; want k interrupted", err, ls)
	}
	if _, err := os.Stat(filepath.Join(store, "workflows", "k.cbor")); err != nil {
		t.Fatal(err)
	}
}

// shownStatus is a workflow's status and reason as `cairn workflow show
// --json` gives them.
func shownStatus(t *testing.T, bin, store, id string) (string, string) {
	t.Helper()
	out, err := exec.Command(bin, "workflow", "show", "--store", store, "--json", id).Output()
	if err != nil {
		t.Fatalf("workflow show: %v\n%s", err, out)
	}
	var shown workflowJSON
	must(t, json.Unmarshal(out, &shown))
	return string(shown.Status), shown.Reason
}
