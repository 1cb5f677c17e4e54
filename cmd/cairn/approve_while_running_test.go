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
// and records the decision, and the resume runs the approved call.
func TestApproveWhileTheRunIsAboutToStopAwaitingApprovalWaitsForIt(t *testing.T) {
	t.Parallel()
	approveWhileSpinning(t, "200ms")
}

// Regression: cairn approve waited a fixed 2 s for a run that held the
// agent, and gave up, exit 5, while the run's round still ran its other
// call, though the run was on its way to the stop at the approval. Here
// that call (spin, its module compiled cold) runs 6 s, to its timeout:
// approve, started while it runs, waits as long as it runs, and records
// the decision once the run stops awaiting approval.
func TestApproveWaitsForARunWhoseOtherCallRunsLong(t *testing.T) {
	t.Parallel()
	approveWhileSpinning(t, "6s")
}

// approveWhileSpinning runs approvalAgent, spin's timeout as given, in a
// real cairn run, approves call_1_0 with cairn approve while spin runs,
// and resumes: approve must succeed, the run end awaiting approval and
// the resume run the approved call.
func approveWhileSpinning(t *testing.T, timeout string) {
	bin, ws, agent := approvalAgent(t, timeout)
	store, cache := t.TempDir(), t.TempDir()

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
