package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn log` of an agent whose round awaits a decision said
// the round "was interrupted; cairn resume continues it", and did not name
// the call that waits: a resume alone only asks again. It names the call,
// its input, and the commands that decide it.
func TestLogOfAgentAwaitingApprovalNamesTheCall(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: hi}}]\n  - text: wrote it\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: asks
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
approvals: [{tool: write_file, action: ask}]
`), 0o644))
	store := filepath.Join(dir, "store")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "asks", "-f", filepath.Join(dir, "agent.yaml"), "write"); code != exitApproval {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	_, out, _ := cairn(t, "log", "--store", store, "asks")
	if !strings.Contains(out, "round 1 awaits a decision on call_1_0 write_file") || !strings.Contains(out, "a.txt") ||
		!strings.Contains(out, "cairn approve") || strings.Contains(out, "was interrupted") {
		t.Fatalf("log:\n%s", out)
	}
}
