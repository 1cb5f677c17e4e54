package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent run with a context section: cairn log keeps every message and
// marks where each cut falls, with its summary; cairn log --json gives the
// cut as a line of its own; cairn events shows each context_compacted.
func TestContextCutsInLogAndEvents(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Repeat("a line of the file\n", 20)), 0o644)
	var script strings.Builder
	script.WriteString("summary: The agent read a.txt again and again.\nturns:\n")
	const rounds = 40
	for i := 0; i < rounds; i++ {
		script.WriteString("  - tool_calls: [{name: read_file, input: {path: a.txt}}]\n")
	}
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644)
	agent := filepath.Join(dir, "agent.yaml")
	os.WriteFile(agent, []byte(fmt.Sprintf(`name: bounded
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: %d}
context: {budget: 1500, policy: summarize}
`, rounds)), 0o644)
	store := filepath.Join(dir, "store")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "b", "-f", agent, "read it"); code != exitPaused {
		t.Fatalf("run: exit %d %s", code, errOut)
	}

	_, out, _ := cairn(t, "log", "--store", store, "b")
	if n := strings.Count(out, "  ← call_"); n != rounds {
		t.Errorf("log shows %d results of %d rounds", n, rounds)
	}
	cuts := strings.Count(out, "── context cut for round ")
	if cuts == 0 || !strings.Contains(out, "   summary: The agent read a.txt again and again.") ||
		!strings.Contains(out, "are summarised in what the model is sent") {
		t.Fatalf("log marks no cut with its summary:\n%s", out)
	}

	_, out, _ = cairn(t, "log", "--json", "--store", store, "b")
	var messages, marks int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Role       string `json:"role"`
			Compaction *struct {
				From    int    `json:"from"`
				Policy  string `json:"policy"`
				Summary string `json:"summary"`
			} `json:"compaction"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("log --json line %q: %v", line, err)
		}
		switch {
		case v.Compaction != nil:
			if v.Compaction.From != messages || v.Compaction.Policy != "summarize" || v.Compaction.Summary == "" {
				t.Errorf("cut %+v after %d messages: want it where it falls, with its summary", v.Compaction, messages)
			}
			marks++
		case v.Role != "":
			messages++
		}
	}
	if messages != 1+2*rounds || marks != cuts {
		t.Errorf("log --json: %d messages and %d cuts, want %d and %d", messages, marks, 1+2*rounds, cuts)
	}

	_, out, _ = cairn(t, "events", "--store", store, "b")
	if n := strings.Count(out, "· context: "); n != cuts || !strings.Contains(out, "oldest messages, all but the task, summarised for round") {
		t.Errorf("events show %d cuts, want %d:\n%s", n, cuts, out)
	}
	_, out, _ = cairn(t, "events", "--json", "--store", store, "b")
	if n := strings.Count(out, `"type":"context_compacted"`); n != cuts {
		t.Errorf("events --json: %d context_compacted, want %d", n, cuts)
	}
}
