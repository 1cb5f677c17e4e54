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

// Regression: after `cairn approve` of the one call that waited, `cairn
// ls` and `cairn show` still said "awaiting approval of call_1_0", though
// a second approve was refused: nothing waited for a person any more. The
// agent is listed paused, and show says a resume carries the decision out.
func TestDecidedAgentIsShownPaused(t *testing.T) {
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
	if code, _, errOut := cairn(t, "approve", "--store", store, "asks", "call_1_0"); code != exitDone {
		t.Fatalf("approve: exit %d: %s", code, errOut)
	}
	if got := lsStatusOf(t, store)["asks"]; got != "paused" {
		t.Errorf("ls says %q, want paused", got)
	}
	_, out, _ := cairn(t, "show", "--store", store, "asks")
	if !strings.Contains(out, "status     paused · its calls that awaited approval are decided; `cairn resume asks`") {
		t.Errorf("show:\n%s", out)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "asks"); code != exitDone {
		t.Fatalf("resume: exit %d: %s", code, errOut)
	}
}
