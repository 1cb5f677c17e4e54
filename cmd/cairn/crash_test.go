package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var crashTrials = flag.Int("crash-trials", 4, "kill -9 trials of a real cairn process (200 for a soak)")

// crashAgent is an agent of many short rounds, two calls each.
func crashAgent(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\nbeta\n"), 0o644)
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&script, "  - tool_calls: [{name: read_file, input: {path: a.txt}}, {name: list_dir, input: {}}]\n")
	}
	script.WriteString("  - text: finished\n")
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644)
	agent := filepath.Join(dir, "agent.yaml")
	os.WriteFile(agent, []byte(`name: crash
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file, list_dir]}]
limits: {max_rounds: 20}
`), 0o644)
	return agent
}

// cairnBinary is the command, built once per test binary.
func cairnBinary(t testing.TB) string {
	t.Helper()
	return goBuild(t, ".")
}

type jsonEvent struct {
	Type   string `json:"type"`
	Round  int    `json:"round"`
	Status string `json:"status"`
	Call   *struct {
		ID         string  `json:"id"`
		DurationMS float64 `json:"duration_ms"`
	} `json:"call"`
	Sealed []struct {
		Call string `json:"call"`
	} `json:"sealed"`
	Finished []string `json:"finished"`
	Awaiting []string `json:"awaiting"`
}

// events parses JSON Lines of events; a line cut off by a kill is ignored.
func events(out []byte) []jsonEvent { return jsonLines[jsonEvent](out) }

// jsonLines parses JSON Lines as Ts, ignoring a line that does not parse
// (one cut off by a kill).
func jsonLines[T any](out []byte) []T {
	var vs []T
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		var v T
		if json.Unmarshal(sc.Bytes(), &v) == nil {
			vs = append(vs, v)
		}
	}
	return vs
}

// A real cairn process is killed with SIGKILL at a random moment of a
// multi-round run; cairn resume then brings it back. No committed round is
// lost, rounds rise with no gaps, every call in flight is sealed exactly
// once, no call that had started before the kill runs again, and the agent
// ends where an uninterrupted run ends.
func TestKillDashNineAndResume(t *testing.T) {
	t.Parallel()
	killTrials(t, func(t testing.TB) string { return t.TempDir() })
}

// killTrials times an uninterrupted run of the crash agent, then runs it
// -crash-trials times in a fresh store newStore makes, kills each run with
// SIGKILL at a random moment and resumes it (see resumeKilled).
func killTrials(t *testing.T, newStore func(testing.TB) string) {
	bin := cairnBinary(t)
	agent := crashAgent(t)
	cache := cacheForTests(t)
	full := warmRunTime(t, bin, func() ([]string, func()) {
		return []string{"run", "--store", newStore(t), "--cache", cache, "--json", "-f", agent}, nil
	})
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for trial := 0; trial < *crashTrials; trial++ {
		delay := time.Duration(rng.Int63n(int64(full)))
		t.Run(fmt.Sprintf("kill-after-%s", delay.Round(time.Millisecond)), func(t *testing.T) {
			killAndResume(t, bin, newStore(t), agent, cache, delay)
		})
	}
}

// warmRunTime runs cairn with the arguments run gives, for a run never
// killed, twice, and checks each with the function it gives (if any); it
// returns how long the second, with the compile cache warm, took: the
// window the kill -9 trials pick their moments in.
func warmRunTime(t *testing.T, bin string, run func() (args []string, check func())) time.Duration {
	t.Helper()
	var full time.Duration
	for range 2 {
		args, check := run()
		start := time.Now()
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("uninterrupted run: %v\n%s", err, out)
		}
		full = time.Since(start)
		if check != nil {
			check()
		}
	}
	return full
}

func killAndResume(t *testing.T, bin, store, agent, cache string, delay time.Duration) {
	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "victim", "-f", agent)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	resumeKilled(t, bin, store, cache, out.Bytes())
}

// resumeKilled resumes the agent a kill stopped, given what the killed run
// printed, checks the resumed run against an uninterrupted one, and
// returns the resumed run's events.
func resumeKilled(t *testing.T, bin, store, cache string, killed []byte) []jsonEvent {
	t.Helper()
	before := events(killed)
	committed, started := 0, map[string]bool{}
	for _, e := range before {
		if e.Type == "checkpoint_saved" {
			committed = e.Round
		}
		if e.Type == "tool_start" {
			started[e.Call.ID] = true
		}
	}

	res := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "victim")
	resOut, err := res.Output()
	if code := res.ProcessState.ExitCode(); code == exitUsage && committed == 0 && len(started) == 0 {
		return nil // killed before the agent was stored: there is nothing to resume
	} else if err != nil {
		t.Fatalf("resume: %v (exit %d)\n%s", err, code, resOut)
	}
	after := events(resOut)
	boundary, next, sealed := -1, 0, map[string]bool{}
	for _, e := range after {
		switch e.Type {
		case "agent_resumed":
			boundary, next = e.Round, e.Round+1
			for _, s := range e.Sealed {
				if sealed[s.Call] {
					t.Errorf("call %s sealed twice", s.Call)
				}
				sealed[s.Call] = true
			}
			for _, f := range e.Finished {
				if sealed[f] {
					t.Errorf("call %s both finished and sealed", f)
				}
			}
		case "checkpoint_saved":
			if e.Round != next {
				t.Errorf("committed round %d, want %d: rounds must rise with no gaps", e.Round, next)
			}
			next++
		case "tool_start":
			if started[e.Call.ID] {
				t.Errorf("call %s had started before the kill and ran again", e.Call.ID)
			}
		}
	}
	last := after[len(after)-1]
	if last.Type != "run_end" || last.Status != "done" || last.Round != 9 {
		t.Fatalf("resumed run ended %+v; want done after 9 rounds\nkilled run:\n%s\nresume:\n%s", last, killed, resOut)
	}
	if boundary >= 0 && boundary < committed {
		t.Fatalf("resume found round %d, but round %d had been committed", boundary, committed)
	}
	for id := range sealed {
		if !started[id] && !strings.HasPrefix(id, fmt.Sprintf("call_%d_", boundary+1)) {
			t.Errorf("sealed call %s is not of the interrupted round %d", id, boundary+1)
		}
	}
	return after
}

// The kill lands right after the run reports committing the round of the
// model's final answer: mostly before the run's end is journaled, a moment
// a random kill seldom hits. The resumed run ends done after the same 9
// rounds, asking the model nothing.
func TestKillAfterTheAnswerAndResume(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	agent := crashAgent(t)
	cache := cacheForTests(t)
	stopped := 0
	for trial := 0; trial < 5; trial++ {
		store := t.TempDir()
		cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "victim", "-f", agent)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		rest := bufio.NewReader(stdout)
		readLinesUntil(rest, &out, func(line []byte) bool {
			var e jsonEvent
			if json.Unmarshal(line, &e) == nil && e.Type == "checkpoint_saved" && e.Round == 9 {
				cmd.Process.Signal(syscall.SIGKILL)
				return true
			}
			return false
		})
		io.Copy(&out, rest)
		cmd.Wait()
		for _, e := range resumeKilled(t, bin, store, cache, out.Bytes()) {
			if e.Type == "agent_resumed" {
				stopped++
			}
		}
	}
	t.Logf("%d of 5 kills stopped the run before its end was journaled", stopped)
}
