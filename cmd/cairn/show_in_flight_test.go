package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Regression: `cairn show --json` of an agent whose run was going on
// listed the call that run was taking among its interrupted_calls, and
// `cairn show` said `cairn resume` would tell what became of it, though
// nothing had interrupted it and resume would find the agent locked. A
// real cairn run spins a call: while it does, show lists the call in
// in_flight_calls; once the run is killed, in interrupted_calls.
func TestShowOfARunningAgentListsItsCallsInFlightNotInterrupted(t *testing.T) {
	t.Parallel()
	bin, _, agent := approvalAgent(t, "60s")
	store, cache := t.TempDir(), cacheForTests(t)
	run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "v", "-f", agent)
	stdout, err := run.StdoutPipe()
	must(t, err)
	must(t, run.Start())
	defer run.Process.Kill()
	for lines := bufio.NewScanner(stdout); lines.Scan(); {
		var e jsonEvent
		json.Unmarshal(lines.Bytes(), &e)
		if e.Type == "tool_start" && e.Call.ID == "call_1_1" {
			break // spin runs
		}
	}
	go io.Copy(io.Discard, stdout)
	show := func() map[string]any {
		out, err := exec.Command(bin, "show", "--store", store, "--json", "v").Output()
		must(t, err)
		var v map[string]any
		must(t, json.Unmarshal(out, &v))
		return v
	}
	has := func(v any, s string) bool { list, _ := v.([]any); return slices.Contains(list, any(s)) }
	running := show()
	if running["status"] != "running" || running["interrupted_calls"] != nil || !has(running["in_flight_calls"], "call_1_1 spin") {
		t.Fatalf("while spin runs: status %v, in_flight_calls %v, interrupted_calls %v",
			running["status"], running["in_flight_calls"], running["interrupted_calls"])
	}
	if out, err := exec.Command(bin, "show", "--store", store, "v").Output(); err != nil || strings.Contains(string(out), "cairn resume") {
		t.Fatalf("show while spin runs: %v\n%s", err, out)
	}
	run.Process.Signal(syscall.SIGKILL)
	run.Wait()
	killed := show()
	if killed["status"] != "interrupted" || killed["in_flight_calls"] != nil || !has(killed["interrupted_calls"], "call_1_1 spin") {
		t.Fatalf("once the run is killed: status %v, in_flight_calls %v, interrupted_calls %v",
			killed["status"], killed["in_flight_calls"], killed["interrupted_calls"])
	}
}
