package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// An agent whose MCP server is in the middle of a call when cairn is
// killed: resume seals the call with its effects unknown, because the
// server runs outside the sandbox and nothing it did was staged; a manual
// resume, which starts no server, reports it so.
func TestMCPServerToolSealedEffectsUnknown(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := hangingToyAgent(t, "")
	store := filepath.Join(dir, "store")
	run := exec.Command(bin, "run", "--store", store, "--cache", cacheForTests(t), "--id", "u", "--json", "-f", filepath.Join(dir, "agent.yaml"))
	must(t, run.Start())
	for {
		if _, err := os.Stat(filepath.Join(dir, "hang.started")); err == nil {
			break
		}
		runtime.Gosched()
	}
	must(t, run.Process.Kill())
	run.Wait()
	// A manual resume, which starts no MCP server, reports the call so
	// too, and the resume after it seals it.
	manual, _ := exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t), "--strategy", "manual", "--json", "u").CombinedOutput()
	if !strings.Contains(string(manual), `"effects":"unknown"`) || !strings.Contains(string(manual), "check what the MCP server did") {
		t.Errorf("resume --strategy manual did not report the call's effects unknown:\n%s", manual)
	}
	out, err := exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t), "--json", "u").CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	var sealed bool
	for _, e := range strings.Split(string(out), "\n") {
		if strings.Contains(e, `"agent_resumed"`) && strings.Contains(e, `"call":`) && strings.Contains(e, `"effects":"unknown"`) {
			sealed = true
		}
	}
	if !sealed {
		t.Errorf("resume did not seal the call with its effects unknown:\n%s", out)
	}
	log, _ := exec.Command(bin, "log", "--store", store, "u").CombinedOutput()
	if !strings.Contains(string(log), "effects on the workspace: unknown") || !strings.Contains(string(log), "model: finished") {
		t.Errorf("cairn log:\n%s", log)
	}
}

// hangingToyAgent writes, in a new directory it returns, the test MCP
// server (toyserver), built, and an agent whose first turn calls its
// hang and whose second answers; more is added to the agent file.
func hangingToyAgent(t *testing.T, more string) string {
	t.Helper()
	dir := t.TempDir()
	placeBuilt(t, "../../host/mcp/testdata/toyserver", filepath.Join(dir, "toyserver"))
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns:\n  - tool_calls: [{name: hang, input: {}}]\n  - text: finished\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: uses-mcp
model: {provider: script, script: script.yaml}
workspace: ws
tools: [{module: builtin, only: [read_file]}]
mcp: [{name: toy, command: [./toyserver]}]
approvals: [{tool: hang, action: allow}]
`+more), 0o644))
	return dir
}
