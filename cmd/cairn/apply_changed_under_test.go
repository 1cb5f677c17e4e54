package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a process killed while it applied a round's settled
// changes, and a file the rest of them write changed by someone else
// before the resume, left the agent unresumable: every resume failed with
// "workspace changed under the call's effects … `cairn resume` tries
// again", after applying the other calls' changes. The changed-under call
// is settled again: its change to that file is refused, the model reads
// why, and the rest of the round's changes are applied once.
func TestResumeAfterAChangeUnderAnUnappliedChange(t *testing.T) {
	t.Parallel()
	const calls = 100
	bin := cairnBinary(t)
	dir := t.TempDir()
	var script strings.Builder
	script.WriteString("turns:\n  - tool_calls:\n")
	for i := range calls {
		fmt.Fprintf(&script, "      - {name: write_file, input: {path: f%d.txt, content: \"%d\"}}\n", i, i)
	}
	script.WriteString("  - text: finished\n")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte("name: many\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin, only: [write_file]}]\n"), 0o644))
	ws := filepath.Join(dir, "workspace")
	must(t, os.Mkdir(ws, 0o755))
	store, cache := filepath.Join(dir, "store"), cacheForTests(t)

	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "w", "-f", agent)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var out bytes.Buffer
	applied := 0
	readLinesUntil(bufio.NewReader(stdout), &out, func(line []byte) bool {
		var e keptEvent
		if json.Unmarshal(line, &e) == nil && e.Type == "effects_applied" {
			applied++
		}
		return applied == 3
	})
	cmd.Process.Kill()
	cmd.Wait()
	last := fmt.Sprintf("f%d.txt", calls-1)
	if _, err := os.Stat(filepath.Join(ws, last)); err == nil {
		t.Fatalf("the killed run applied %s: the kill came after the round's applies", last)
	}
	must(t, os.WriteFile(filepath.Join(ws, last), []byte("mine"), 0o644))

	for i := range 2 {
		b, err := exec.Command(bin, "resume", "--store", store, "--cache", cache, "w").CombinedOutput()
		if i == 0 && err != nil {
			t.Fatalf("resume: %v\n%s", err, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, last)); string(b) != "mine" {
		t.Errorf("%s holds %q: the change made under the call was overwritten", last, b)
	}
	for i := range calls - 1 {
		if b, err := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%d.txt", i))); err != nil || string(b) != fmt.Sprint(i) {
			t.Fatalf("f%d.txt: %q, %v", i, b, err)
		}
	}
	b, err := exec.Command(bin, "log", "--store", store, "--json", "w").CombinedOutput()
	must(t, err)
	var told bool
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
		var m struct {
			Role, Text string
			CallID     string `json:"call_id"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.CallID == fmt.Sprintf("call_1_%d", calls-1) {
			told = strings.Contains(m.Text, "did not reach the workspace") && strings.Contains(m.Text, last)
		}
	}
	if !told {
		t.Errorf("the model was not told its change to %s was refused:\n%s", last, b)
	}
}
