package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Regression: `cairn resume --strategy replay` dropped a round whose call
// of an MCP server was in flight at a kill -9, and the model's asking
// again sent the call to the server a second time, though the server runs
// outside the sandbox and may have acted on the first. Replay keeps such
// a round and seals the call, as it does a round that sent a POST.
func TestReplayKeepsARoundThatCalledAnMCPServer(t *testing.T) {
	bin := cairnBinary(t)
	dir := hangingToyAgent(t, "sandbox: {timeout: 2s}\n")
	store := filepath.Join(dir, "store")
	started := filepath.Join(dir, "hang.started")
	run := exec.Command(bin, "run", "--store", store, "--cache", cacheForTests(t), "--id", "u", "-f", filepath.Join(dir, "agent.yaml"))
	must(t, run.Start())
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		runtime.Gosched()
	}
	must(t, run.Process.Kill())
	run.Wait()
	if pid, err := os.ReadFile(started); err == nil {
		// The server outlives cairn's kill -9; it is not the one resume uses.
		exec.Command("kill", string(pid)).Run()
	}
	must(t, os.Remove(started))
	out, err := exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t), "--strategy", "replay", "u").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if _, err := os.Stat(started); err == nil {
		t.Fatalf("replay called the MCP server's hang again:\n%s", out)
	}
	if !strings.Contains(string(out), "outside the sandbox") || !strings.Contains(string(out), "sealed") {
		t.Errorf("resume did not say why it kept the round, or did not seal the call:\n%s", out)
	}
}
