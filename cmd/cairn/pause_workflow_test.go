package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression: `cairn pause W` of a workflow's id said agent "W" was not
// found (exit 2), and a workflow could be paused only by naming its
// running step's agent. It asks the agents of the workflow's running
// steps to pause: the running step pauses at its boundary, the workflow
// ends paused (exit 3) without starting the step after it, and `cairn
// workflow resume` finishes it.
func TestPauseOfAWorkflowPausesItsRunningSteps(t *testing.T) {
	bin, cache := cairnBinary(t), cacheForTests(t)
	srv, requests, stalled, release := turnModel(t, 2)
	dir := flowFiles(t, map[string]string{
		"looker.yaml": fmt.Sprintf(`name: looker
model: {provider: openai, name: m, base_url: %s/v1, max_retries: -1}
tools: [{module: builtin, only: [list_dir]}]
`, srv.URL),
		"after.yaml":  "name: after\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin, only: [list_dir]}]\n",
		"script.yaml": "turns:\n  - text: after done\n",
		"flow.yaml": `name: f
workspace: ws
steps:
  - {name: look, agent: looker.yaml, prompt: look around}
  - {name: then, agent: after.yaml, prompt: go on, needs: [look]}
`})
	store := filepath.Join(dir, "store")
	run := exec.Command(bin, "workflow", "run", "--store", store, "--cache", cache, "--id", "w", filepath.Join(dir, "flow.yaml"))
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	must(t, run.Start())
	select {
	case <-stalled: // step look's round 1 is committed; round 2 waits for the model
	case <-time.After(time.Minute):
		run.Process.Kill()
		t.Fatalf("step look never reached its second model request\n%s", runOut.String())
	}
	out, err := exec.Command(bin, "pause", "--store", store, "--cache", cache, "w").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "asked workflow w's running steps to pause") || !strings.Contains(string(out), "step look (agent w.look)") {
		t.Fatalf("cairn pause w: %v\n%s", err, out)
	}
	releaseAfterPauseLook(release)
	waitExit(t, run, "the paused workflow did not end within a minute")
	if code := run.ProcessState.ExitCode(); code != exitPaused {
		t.Fatalf("workflow run: exit %d, want %d\n%s", code, exitPaused, runOut.String())
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("the model had %d requests, want 2: step look went on past its boundary", n)
	}
	if _, err := os.Stat(filepath.Join(store, "agents", "w.then")); !os.IsNotExist(err) {
		t.Fatalf("step then started after the pause: %v", err)
	}
	code, _, errOut := cairn(t, "pause", "--store", store, "w")
	if code != exitFailed || !strings.Contains(errOut, "workflow w has no step running") {
		t.Fatalf("pause of a paused workflow: exit %d\n%s", code, errOut)
	}
	code, resumeOut, errOut := cairn(t, "workflow", "resume", "--store", store, "--cache", cache, "w")
	if code != exitDone || !strings.Contains(resumeOut+errOut, "after done") {
		t.Fatalf("workflow resume: exit %d\n%s%s", code, resumeOut, errOut)
	}
}
