package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Regression: an agent's MCP server that was busy, not reading its
// stdin, outlived cairn killed with kill -9: its stdin's end was the
// only sign it had, so it ran on, an orphan, and each resume started
// another. A server is signalled (SIGTERM) when the process that started
// it dies.
func TestMCPServerDiesWithCairn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	bin := cairnBinary(t)
	dir := hangingToyAgent(t, "sandbox: {timeout: 5m}\n")
	agent := filepath.Join(dir, "agent.yaml")
	b, err := os.ReadFile(agent)
	must(t, err)
	must(t, os.WriteFile(agent, bytes.Replace(b, []byte("[./toyserver]"), []byte("[./toyserver, hang-at-start]"), 1), 0o644))
	run := exec.Command(bin, "run", "--store", filepath.Join(dir, "store"), "--cache", cacheForTests(t), "--id", "o", "-f", agent)
	must(t, run.Start())
	var pid int
	for deadline := time.Now().Add(time.Minute); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "start.pid")); err == nil && len(b) > 0 {
			pid, _ = strconv.Atoi(string(b))
		}
		if time.Now().After(deadline) {
			run.Process.Kill()
			t.Fatal("the server did not start within a minute")
		}
	}
	must(t, run.Process.Kill())
	run.Wait()
	for deadline := time.Now().Add(10 * time.Second); processAlive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
			t.Fatalf("the MCP server (pid %d) still runs 10 s after cairn was killed", pid)
		}
	}
}

// processAlive reports whether pid is a process that has not exited (a
// zombie, which nothing may reap here, has).
func processAlive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
