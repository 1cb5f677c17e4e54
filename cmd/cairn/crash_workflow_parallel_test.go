package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// shownStep is a step as `cairn workflow show --json` records it.
type shownStep struct {
	Name     string `json:"name"`
	Agent    string `json:"agent"`
	Output   string `json:"output"`
	Started  string `json:"started"`
	Finished string `json:"finished"`
	Status   string `json:"status"`
	Reason   string `json:"reason"`
}

// shownSteps is the steps the workflow id has recorded, by name; a step
// recorded twice fails the test.
func shownSteps(t *testing.T, bin, store, id string) (string, map[string]shownStep) {
	t.Helper()
	out, err := exec.Command(bin, "workflow", "show", "--store", store, "--json", id).Output()
	if err != nil {
		t.Fatalf("workflow show: %v\n%s", err, out)
	}
	var w struct {
		Status string      `json:"status"`
		Steps  []shownStep `json:"steps"`
	}
	must(t, json.Unmarshal(out, &w))
	steps := map[string]shownStep{}
	for _, s := range w.Steps {
		if _, ok := steps[s.Name]; ok {
			t.Errorf("step %s is recorded twice:\n%s", s.Name, out)
		}
		steps[s.Name] = s
	}
	return w.Status, steps
}

// agentsDone is the agents of the store whose last run ended done.
func agentsDone(t *testing.T, bin, store string) map[string]bool {
	t.Helper()
	out, err := exec.Command(bin, "ls", "--store", store, "--json").Output()
	if err != nil {
		t.Fatalf("cairn ls: %v\n%s", err, out)
	}
	done := map[string]bool{}
	for _, a := range jsonLines[struct{ Agent, Status string }](out) {
		done[a.Agent] = a.Status == "done"
	}
	return done
}

// flowEvent is what the parallel workflow crash test reads of a line of
// a workflow's run: a step's line or an event of a step's agent.
type flowEvent struct {
	Type  string `json:"type"`
	Step  string `json:"step"`
	Agent string `json:"agent"`
	Call  *struct {
		ID string `json:"id"`
	} `json:"call"`
	Dropped []string `json:"dropped"`
}

// A real cairn process runs the example workflow, whose summary and stats
// steps run side by side, and is killed with SIGKILL at a random moment of
// the whole run, or while both parallel steps run. Before each trial's
// `cairn workflow resume` the store is read: the steps the workflow
// recorded, and the step agents that had ended done. After it: the
// workflow is done with every step's output what a run never killed made,
// each step recorded once; a step recorded before the resume keeps its
// record as it was and is skipped; the agent of a step that had ended is
// not asked the model again nor runs a call; no call that ended before
// the kill starts again, nor one in flight at the kill unless the step's
// resume dropped its round (replay, of a round that changed nothing);
// and REPORT.md is what a run never killed wrote.
func TestKilledParallelWorkflowRecordsEachStepOnce(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	cache := cacheForTests(t)
	var want map[string]shownStep
	var wantReport []byte
	full := warmRunTime(t, bin, func() ([]string, func()) {
		store, ws := t.TempDir(), flowWorkspace(t)
		return []string{"workflow", "run", "--store", store, "--cache", cache, "--json", "--id", "flow", "--workspace", ws, exampleFlow},
			func() {
				_, want = shownSteps(t, bin, store, "flow")
				var err error
				wantReport, err = os.ReadFile(filepath.Join(ws, "REPORT.md"))
				must(t, err)
			}
	})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	stats := map[string]int{}
	for trial := range soakTrials(t) {
		var name string
		var kill func(*exec.Cmd, *bufio.Reader, *bytes.Buffer)
		delay := time.Duration(rng.Int63n(int64(full)))
		if trial%2 == 0 {
			name = fmt.Sprintf("random-%s", delay.Round(time.Millisecond))
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) { killAfter(cmd, stdout, out, delay) }
		} else {
			delay /= 4
			name = fmt.Sprintf("parallel+%s", delay.Round(time.Millisecond))
			kill = func(cmd *exec.Cmd, stdout *bufio.Reader, out *bytes.Buffer) {
				readLinesUntil(stdout, out, func(line []byte) bool {
					var e flowEvent
					return json.Unmarshal(line, &e) == nil && e.Type == "step_start" && e.Step == "stats"
				})
				killAfter(cmd, stdout, out, delay)
			}
		}
		t.Run(name, func(t *testing.T) {
			store, ws := t.TempDir(), flowWorkspace(t)
			cmd := exec.Command(bin, "workflow", "run", "--store", store, "--cache", cache, "--json",
				"--id", "flow", "--workspace", ws, exampleFlow)
			stdout, err := cmd.StdoutPipe()
			must(t, err)
			must(t, cmd.Start())
			var out bytes.Buffer
			kill(cmd, bufio.NewReader(stdout), &out)
			cmd.Wait()
			started, ended := map[string]bool{}, map[string]bool{}
			for _, e := range jsonLines[flowEvent](out.Bytes()) {
				switch e.Type {
				case "tool_start":
					started[e.Agent+" "+e.Call.ID] = true
				case "tool_end":
					ended[e.Agent+" "+e.Call.ID] = true
				}
			}
			if _, err := os.Stat(filepath.Join(store, "workflows", "flow.cbor")); err != nil {
				stats["before the workflow was stored"]++
				return
			}
			_, before := shownSteps(t, bin, store, "flow")
			done := agentsDone(t, bin, store)
			res := exec.Command(bin, "workflow", "resume", "--store", store, "--cache", cache, "--json", "flow")
			resOut, err := res.Output()
			if err != nil {
				t.Fatalf("resume: %v\n%s\nkilled run:\n%s", err, resOut, out.Bytes())
			}
			ran, dropped := map[string]int{}, map[string]bool{}
			for _, e := range jsonLines[flowEvent](resOut) {
				switch e.Type {
				case "agent_resumed":
					for _, c := range e.Dropped {
						dropped[e.Agent+" "+c] = true
					}
				case "step_start":
					ran[e.Step]++
					if s, ok := before[e.Step]; ok && s.Finished != "" {
						t.Errorf("step %s was recorded finished before the resume, and resume started it", e.Step)
					}
				case "model_turn", "tool_start":
					if done[e.Agent] {
						t.Errorf("agent %s had ended before the resume, and resume ran it again (%s)", e.Agent, e.Type)
					}
					if e.Type != "tool_start" {
						continue
					}
					if call := e.Agent + " " + e.Call.ID; ended[call] || started[call] && !dropped[call] {
						t.Errorf("call %s of %s started before the kill (ended: %v) and started again, not dropped by replay", e.Call.ID, e.Agent, ended[call])
					}
				}
			}
			for step, n := range ran {
				if n > 1 {
					t.Errorf("step %s started %d times by resume", step, n)
				}
			}
			status, got := shownSteps(t, bin, store, "flow")
			if status != "done" {
				t.Fatalf("after resume the workflow is %s\n%s", status, resOut)
			}
			for name, s := range got {
				if s.Output != want[name].Output {
					t.Errorf("step %s output %q, want %q", name, s.Output, want[name].Output)
				}
				if b, ok := before[name]; ok && b.Finished != "" && !reflect.DeepEqual(b, s) {
					t.Errorf("step %s was recorded before the resume as %+v, and after it as %+v", name, b, s)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d steps recorded, want %d", len(got), len(want))
			}
			report, err := os.ReadFile(filepath.Join(ws, "REPORT.md"))
			if err != nil || !bytes.Equal(report, wantReport) {
				t.Errorf("REPORT.md after resume: %q, %v", report, err)
			}
			if t.Failed() {
				t.Logf("killed run:\n%s\nresume:\n%s", out.Bytes(), resOut)
			}
			finished := 0
			for _, s := range before {
				if s.Finished != "" {
					finished++
				}
			}
			stats[fmt.Sprintf("%d steps recorded before resume", finished)]++
		})
	}
	t.Logf("%d trials, an uninterrupted run taking %s: %v", soakTrials(t), full.Round(time.Millisecond), stats)
}
