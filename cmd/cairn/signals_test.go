package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGINT and SIGTERM sent to a real cairn process stop the call in flight,
// leave the agent at its last committed round and exit as paused (3);
// resume then finishes the agent.
func TestSignalStopsAtTheBoundary(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`
turns:
  - tool_calls: [{name: echo, input: {text: hi}}]
  - tool_calls: [{name: spin, input: {}}]
  - text: done
`), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: stop
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [spin, echo], grant: {workspace: ro}}]
sandbox: {timeout: 10m}
`), 0o644))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			store, cache := t.TempDir(), cacheForTests(t)
			run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "s", "-f", agent)
			stdout, err := run.StdoutPipe()
			must(t, err)
			var stderr strings.Builder
			run.Stderr = &stderr
			must(t, run.Start())
			lines := bufio.NewScanner(stdout)
			for lines.Scan() {
				if l := lines.Text(); strings.Contains(l, `"tool_start"`) && strings.Contains(l, `"spin"`) {
					break // round 1 is committed; round 2's call runs
				}
			}
			must(t, run.Process.Signal(sig))
			var last string
			for lines.Scan() {
				last = lines.Text()
			}
			waitExit(t, run, "cairn did not stop within a minute of the signal")
			if code := run.ProcessState.ExitCode(); code != exitPaused || !strings.Contains(last, `"status":"paused"`) {
				t.Fatalf("exit %d, last event %s, stderr %s; want %d and a paused run_end", code, last, stderr.String(), exitPaused)
			}
			if !strings.Contains(last, `"round":1`) || !strings.Contains(last, unixName(sig)) {
				t.Fatalf("run_end %s: want round 1 and the signal's name", last)
			}
			out, err := exec.Command(bin, "resume", "--store", store, "--cache", cache, "s").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "sealed  call_2_0 spin") || !strings.Contains(string(out), "done after 3 rounds") {
				t.Fatalf("resume: %v\n%s", err, out)
			}
		})
	}
}

func unixName(s syscall.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

// A second signal ends the process at once, even while the first one's
// stop has not finished: a process stuck on its way out can always be
// ended from the keyboard. The test runs interruptible in a child process
// (this test binary, re-run) that never finishes stopping.
func TestSecondSignalEndsTheProcess(t *testing.T) {
	if os.Getenv("CAIRN_SIGNAL_CHILD") == "1" {
		ctx, cancel := interruptible(t.Context())
		defer cancel()
		os.Stdout.WriteString("ready\n")
		<-ctx.Done()
		os.Stdout.WriteString("stopping\n")
		select {} // a stop that never ends
	}
	child := exec.Command(os.Args[0], "-test.run", "^TestSecondSignalEndsTheProcess$")
	child.Env = append(os.Environ(), "CAIRN_SIGNAL_CHILD=1")
	stdout, err := child.StdoutPipe()
	must(t, err)
	must(t, child.Start())
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		for lines.Scan() {
			if lines.Text() == want {
				return
			}
		}
		child.Process.Kill()
		t.Fatalf("the child never said %q", want)
	}
	expect("ready")
	must(t, child.Process.Signal(syscall.SIGINT))
	expect("stopping")
	must(t, child.Process.Signal(syscall.SIGINT))
	waitExit(t, child, "the second SIGINT did not end the process")
	ws, ok := child.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("child ended with %v; want killed by SIGINT", child.ProcessState)
	}
}

// waitExit waits for cmd to end, for a minute at most; past that it kills
// it and fails with why.
func waitExit(t *testing.T, cmd *exec.Cmd, why string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal(why)
	}
}
