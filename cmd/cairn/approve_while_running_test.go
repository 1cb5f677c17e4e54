package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Regression: cairn approve of a call while a run held the agent failed
// at once with exit 5, the agent locked, though the run was about to stop
// awaiting that very decision. A real cairn run asks for approval of one
// call and runs another (spin, until its 200ms timeout); cairn approve,
// started while spin runs, waits for the run to stop awaiting approval
// and records the decision, and the resume runs the approved call. The
// spin is short beside approve's 2 s wait so that a loaded machine, where
// the run's stop after the spin can take a second, still lets it in; and
// its module is compiled before the run, since a cold compile of it, done
// after tool_start, takes seconds, and the run was not then about to stop.
func TestApproveWhileTheRunIsAboutToStopAwaitingApprovalWaitsForIt(t *testing.T) {
	t.Parallel()
	bin, ws, agent := approvalAgent(t, "200ms")
	store, cache := t.TempDir(), cacheForTests(t)
	warm := filepath.Join(filepath.Dir(agent), "hostile.wasm")
	if out, err := exec.Command(bin, "tools", "warm", "--cache", cache, warm).CombinedOutput(); err != nil {
		t.Fatalf("tools warm: %v\n%s", err, out)
	}

	run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "v", "-f", agent)
	stdout, err := run.StdoutPipe()
	must(t, err)
	must(t, run.Start())
	lines := bufio.NewScanner(stdout)
	spins := false
	for lines.Scan() {
		var e jsonEvent
		json.Unmarshal(lines.Bytes(), &e)
		if e.Type == "tool_start" && e.Call.ID == "call_1_1" {
			spins = true
			break // the request for call_1_0 is in the journal
		}
	}
	if !spins {
		run.Wait()
		t.Fatal("the run never ran spin")
	}
	out, err := exec.Command(bin, "approve", "--store", store, "--cache", cache, "v", "call_1_0").CombinedOutput()
	go io.Copy(io.Discard, stdout)
	run.Wait()
	if err != nil {
		t.Fatalf("approve while the run spun: %v\n%s", err, out)
	}
	if code := run.ProcessState.ExitCode(); code != exitApproval {
		t.Fatalf("the run: exit %d, want %d (awaiting approval)", code, exitApproval)
	}
	if out, err := exec.Command(bin, "resume", "--store", store, "--cache", cache, "v").CombinedOutput(); err != nil {
		t.Fatalf("resume after the approval: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "approved" {
		t.Fatalf("out.txt = %q, want the approved call's write", b)
	}
}
