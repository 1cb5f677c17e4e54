package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

const exampleFlow = "../../examples/workflow/flow.yaml"

// flowLine is what the crash test reads of a workflow's JSON line.
type flowLine struct {
	Type    string `json:"type"`
	Step    string `json:"step"`
	Resumed bool   `json:"resumed"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Steps   []struct {
		Name   string `json:"name"`
		Output string `json:"output"`
	} `json:"steps"`
}

// flowWorkspace is a copy of the example workflow's workspace.
func flowWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	copyFile(t, "../../examples/workflow/workspace/notes.md", filepath.Join(ws, "notes.md"))
	return ws
}

// shownOutputs runs cairn workflow show --json and returns its status and
// each step's output.
func shownOutputs(t *testing.T, bin, store, id string) (string, map[string]string) {
	t.Helper()
	out, err := exec.Command(bin, "workflow", "show", "--store", store, "--json", id).Output()
	if err != nil {
		t.Fatalf("workflow show: %v\n%s", err, out)
	}
	ls := jsonLines[flowLine](out)
	outputs := map[string]string{}
	for _, s := range ls[0].Steps {
		outputs[s.Name] = s.Output
	}
	return ls[0].Status, outputs
}

// A real cairn process runs the example workflow — five steps, a diamond
// of needs — and is killed with SIGKILL after the k-th line it prints, k
// spread over the whole run. After each trial's `cairn workflow resume`:
// every step the killed run reported done is skipped and never started
// again, every other step is skipped (journaled, the kill fell before its
// report) or runs once, the workflow is done, and every step's output and
// the report in the workspace are what a run that was never killed made.
func TestKilledWorkflowResumesUnfinishedSteps(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	cache := cacheForTests(t)
	wholeStore, wholeWS := t.TempDir(), flowWorkspace(t)
	whole, err := exec.Command(bin, "workflow", "run", "--store", wholeStore, "--cache", cache, "--json",
		"--id", "flow", "--workspace", wholeWS, exampleFlow).Output()
	if err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, whole)
	}
	lines := bytes.Count(whole, []byte("\n"))
	_, want := shownOutputs(t, bin, wholeStore, "flow")
	wantReport, err := os.ReadFile(filepath.Join(wholeWS, "REPORT.md"))
	must(t, err)
	trials := soakTrials(t) * 2
	for trial := range trials {
		k := 1 + trial*(lines-2)/trials
		t.Run(fmt.Sprintf("kill-after-line-%d", k), func(t *testing.T) {
			store, ws := t.TempDir(), flowWorkspace(t)
			doneBefore := killWorkflowAfter(t, bin, cache, store, ws, k)
			res := exec.Command(bin, "workflow", "resume", "--store", store, "--cache", cache, "--json", "flow")
			out, err := res.Output()
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			// A step the killed run journaled may not have been reported:
			// the kill can fall between the two. So every step reported
			// done is skipped, and every step is skipped or run, once.
			started, skipped, resumed := map[string]int{}, map[string]bool{}, 0
			for _, l := range jsonLines[flowLine](out) {
				switch l.Type {
				case "step_start":
					started[l.Step]++
					if l.Resumed {
						resumed++
					}
				case "step_skip":
					skipped[l.Step] = true
				case "workflow_end":
					if l.Status == "done" && strings.Contains(l.Reason, "nothing to resume") && len(started)+len(skipped) == 0 {
						// The kill landed after the run had ended: every
						// step had completed, and none runs again.
						for step := range want {
							skipped[step] = true
						}
					}
				}
			}
			for step := range doneBefore {
				if !skipped[step] {
					t.Errorf("step %s was reported done before the kill, and resume did not skip it", step)
				}
			}
			for step, n := range started {
				if skipped[step] || n != 1 {
					t.Errorf("step %s started %d times by resume (skipped: %v)", step, n, skipped[step])
				}
			}
			if len(started)+len(skipped) != len(want) {
				t.Errorf("%d steps ran and %d were skipped, of %d", len(started), len(skipped), len(want))
			}
			t.Logf("%d steps reported done before the kill, %d skipped, %d agents resumed from their boundary, %d steps run",
				len(doneBefore), len(skipped), resumed, len(started))
			status, got := shownOutputs(t, bin, store, "flow")
			if status != "done" || !reflect.DeepEqual(got, want) {
				t.Fatalf("after resume: %s, outputs\n%q\nwant\n%q", status, got, want)
			}
			report, err := os.ReadFile(filepath.Join(ws, "REPORT.md"))
			if err != nil || !bytes.Equal(report, wantReport) {
				t.Fatalf("REPORT.md after resume: %q, %v", report, err)
			}
		})
	}
}

// killWorkflowAfter runs the example workflow and kills it with SIGKILL
// once it has printed k lines; it returns the steps it reported done.
func killWorkflowAfter(t *testing.T, bin, cache, store, ws string, k int) map[string]bool {
	t.Helper()
	cmd := exec.Command(bin, "workflow", "run", "--store", store, "--cache", cache, "--json",
		"--id", "flow", "--workspace", ws, exampleFlow)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var out bytes.Buffer
	rest := bufio.NewReader(stdout)
	n := 0
	if k > 0 {
		readLinesUntil(rest, &out, func([]byte) bool { n++; return n == k })
	}
	cmd.Process.Signal(syscall.SIGKILL)
	io.Copy(&out, rest) // what it printed before the kill landed
	cmd.Wait()
	done := map[string]bool{}
	for _, l := range jsonLines[flowLine](out.Bytes()) {
		if l.Type == "step_done" {
			done[l.Step] = true
		}
	}
	return done
}
