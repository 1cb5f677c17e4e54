package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression: the first SIGTERM was ignored while a call waited for its
// approval question's answer (elicitation/create sent, no answer yet):
// only a second signal ended `cairn mcp`. The first stops it as it stops
// a running call: the call is answered -32603, denied and committed, and
// the process exits 0.
func TestMCPSignalWhileAsking(t *testing.T) {
	bin := cairnBinary(t)
	agent, store := scriptAgent(t, `name: asker
model: {provider: script}
workspace: workspace
tools: [{module: builtin}]
approvals:
  - {tool: write_file, action: ask}
`, "turns: []\n")
	cmd := exec.Command(bin, "mcp", "-f", agent, "--id", "q", "--store", store, "--cache", cacheForTests(t))
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	io.WriteString(stdin, strings.ReplaceAll(mcpLines, `"capabilities":{}`, `"capabilities":{"elicitation":{}}`))
	lines := make(chan map[string]any, 10)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	next := func() map[string]any {
		select {
		case m := <-lines:
			return m
		case <-time.After(time.Minute):
			t.Fatal("cairn mcp wrote nothing within a minute")
		}
		return nil
	}
	for m := next(); m["method"] != "elicitation/create"; m = next() {
		if m == nil {
			t.Fatal("cairn mcp ended before it asked")
		}
	}
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	answer := next()
	for answer != nil && answer["id"] == nil { // notifications/cancelled of the question
		answer = next()
	}
	if e, _ := answer["error"].(map[string]any); answer["id"] != 2.0 || e == nil || e["code"] != -32603.0 ||
		!strings.Contains(e["message"].(string), "approval question") {
		t.Errorf("the call asked about was answered %v", answer)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		if code := cmd.ProcessState.ExitCode(); code != exitDone {
			t.Errorf("exit %d, want %d", code, exitDone)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cairn mcp still runs 5 s after one SIGTERM, a question open")
	}
	out, err := exec.Command(bin, "log", "--store", store, "q").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "mcp-1 write_file") || !strings.Contains(string(out), "denied") {
		t.Errorf("cairn log after the signal: %v\n%s", err, out)
	}
}
