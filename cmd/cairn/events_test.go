package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cairn events replays, byte for byte, the JSON Lines that --json streamed
// live, and --run picks one run's.
func TestEventsReplayWhatJSONStreamed(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	code, live, errOut := cairn(t, append([]string{"run", "--json", "--id", "ev"}, args...)...)
	if code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	code, replay, errOut := cairn(t, "events", "--json", "--store", store, "ev")
	if code != exitDone || replay != live {
		t.Fatalf("events: exit %d %s\nreplayed:\n%s\nlive:\n%s", code, errOut, replay, live)
	}
	first := events([]byte(live))[0]
	if first.Type != "run_start" {
		t.Fatalf("first event %q", first.Type)
	}
	code, again, _ := cairn(t, append([]string{"run", "--json", "--id", "ev", "--workspace", args[3]}, args...)...)
	if code != exitDone {
		t.Fatalf("second run: exit %d", code)
	}
	_, all, _ := cairn(t, "events", "--json", "--store", store, "ev")
	if all != live+again {
		t.Fatal("the history of two runs is not both runs' events in order")
	}
	var runID string
	for _, line := range strings.Split(live, "\n") {
		if strings.Contains(line, `"run_start"`) {
			runID = line[strings.Index(line, `"run":"`)+7:]
			runID = runID[:strings.Index(runID, `"`)]
		}
	}
	_, one, _ := cairn(t, "events", "--json", "--store", store, "--run", runID, "ev")
	if one != live {
		t.Fatalf("--run %s did not pick the first run's events", runID)
	}
	_, human, _ := cairn(t, "events", "--store", store, "--run", runID, "ev")
	if !strings.Contains(human, "✓ write_file") || !strings.Contains(human, "done after 5 rounds") {
		t.Fatalf("human replay:\n%s", human)
	}
	if code, _, _ := cairn(t, "events", "--store", store, "nobody"); code != exitUsage {
		t.Fatalf("events of an unknown agent: exit %d", code)
	}
}

// --follow prints a running agent's events as they come and returns when
// its run ends, having printed every one.
func TestEventsFollowARunningAgent(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(
		"turns:\n  - tool_calls: [{name: spin, input: {}}]\n  - tool_calls: [{name: spin, input: {}}]\n  - text: done\n"), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: slow
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [spin], grant: {workspace: ro}}]
sandbox: {timeout: 500ms}
`), 0o644))
	store, cache := t.TempDir(), cacheForTests(t)
	run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "f", "-f", agent)
	stdout, err := run.StdoutPipe()
	must(t, err)
	must(t, run.Start())
	var live bytes.Buffer
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		live.Write(append(lines.Bytes(), '\n'))
		if strings.Contains(lines.Text(), `"tool_start"`) {
			break // the run is under way
		}
	}
	follow, err := exec.Command(bin, "events", "--store", store, "--json", "--follow", "f").Output()
	if err != nil {
		t.Fatalf("events --follow: %v", err)
	}
	for lines.Scan() {
		live.Write(append(lines.Bytes(), '\n'))
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if string(follow) != live.String() {
		t.Fatalf("followed:\n%s\nlive:\n%s", follow, live.String())
	}
}

// Regression: `events --run NOSUCH` printed nothing and exited 0.
func TestEventsOfUnknownRun(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "ev"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	code, out, errOut := cairn(t, "events", "ev", "--run", "NOSUCH", "--store", store)
	if code != exitUsage || out != "" || !strings.Contains(errOut, `agent ev has no run "NOSUCH"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
