package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression: `cairn resume --strategy manual` of a delegation step's
// agent started the agent's MCP server to make its report. Of one that a
// cairn which did not keep its parent file made, it started it under the
// agent's own time and output limits, not those of the parent file, which
// the store does not keep: a server that the parent file's timeout (2s,
// here) stops at its start held the report for the sandbox's default of
// 30s. Of one that keeps it, the report failed (exit 1) when the server
// did not start within the parent file's timeout. A manual resume, which
// runs nothing, starts no MCP server and reports; of the agent whose
// parent file is not kept, it says that the workflow's resume goes on.
func TestManualResumeOfAStepAgentStartsNoServer(t *testing.T) {
	t.Parallel()
	for _, kept := range []bool{false, true} {
		t.Run(map[bool]string{false: "its parent file not kept", true: "its parent file kept"}[kept], func(t *testing.T) {
			t.Parallel()
			manualOfSlowServerStep(t, kept)
		})
	}
}

// manualOfSlowServerStep runs `cairn resume --strategy manual` of the
// agent of a paused delegation step whose MCP server, its parent file's
// too, would now take 8s to start, past the parent file's timeout of 2s;
// with kept false, the agent's definition keeps no parent file.
func manualOfSlowServerStep(t *testing.T, kept bool) {
	server := `mcp: [{name: toy, command: [sh, -c, "if test -e slow; then touch slow.started; sleep 8; fi; exec ./toyserver"]}]` + "\n"
	dir := flowFiles(t, map[string]string{
		"lead.yaml": "name: lead\nmodel: {provider: script}\ntools: [{module: builtin}]\nsandbox: {timeout: 2s}\n" + server +
			"approvals: [{tool: write_file, action: deny}]\nagents: [{name: alpha, file: alpha.yaml}]\n",
		"alpha.yaml": "name: alpha\nmodel: {provider: script, script: alpha-script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\n" + server + "limits: {max_rounds: 1}\n",
		"alpha-script.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: x}}]\n" +
			"  - tool_calls: [{name: shout, input: {text: y}}]\n  - text: done\n",
		"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: one, parent: lead.yaml, delegate: alpha, task: go}\n",
	})
	placeBuilt(t, "../../host/mcp/testdata/toyserver", filepath.Join(dir, "toyserver"))
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitPaused {
		t.Fatalf("workflow run: exit %d, %s", code, errOut)
	}
	if !kept {
		forgetAbove(t, store, "w.one")
	}
	must(t, os.WriteFile(filepath.Join(dir, "slow"), nil, 0o644))
	before := dirBytes(t, store)
	start := time.Now()
	code, out, errOut := cairn(t, append([]string{"resume", "--strategy", "manual", "w.one"}, flags...)...)
	took := time.Since(start)
	if _, err := os.Stat(filepath.Join(dir, "slow.started")); err == nil {
		t.Fatalf("resume --strategy manual w.one started the MCP server, and took %s: exit %d\n%s%s", took.Round(time.Second), code, out, errOut)
	}
	refused := strings.Contains(errOut, "a resume that runs it is refused") && strings.Contains(errOut, "`cairn workflow resume w`")
	if code != exitPaused || !strings.Contains(out, "from the boundary after round 1") || !strings.Contains(errOut, "manual: reported, nothing changed") || refused == kept {
		t.Fatalf("resume --strategy manual w.one: exit %d\n%s%s\nwant its report, and, if its parent file is not kept, that `cairn workflow resume w` goes on", code, out, errOut)
	}
	if dirBytes(t, store) != before {
		t.Fatal("resume --strategy manual w.one changed the store")
	}
}
