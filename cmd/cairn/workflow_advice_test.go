package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Regression: `cairn workflow run --parallel -1` was taken silently (and
// ran with the workflow file's limit). A --parallel below 1 is a usage
// error, for run and resume, and nothing is stored.
func TestWorkflowParallelBelowOneRefused(t *testing.T) {
	dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: s, tool: read_file, module: builtin, input: {path: notes.md}}\n"})
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	for _, args := range [][]string{
		{"workflow", "run", "--parallel", "-1", filepath.Join(dir, "flow.yaml")},
		{"workflow", "run", "--parallel", "0", filepath.Join(dir, "flow.yaml")},
		{"workflow", "resume", "--parallel", "-1", "f"},
	} {
		code, out, errOut := cairn(t, append(args, flags...)...)
		if code != exitUsage || !strings.Contains(errOut, "--parallel") || !strings.Contains(errOut, "1 or more") {
			t.Errorf("%q: exit %d\n%s%s; want exit %d naming --parallel", args, code, out, errOut, exitUsage)
		}
	}
	if files := storedFiles(t, store); len(files) != 0 {
		t.Errorf("stored %v", files)
	}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--parallel", "1", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitDone {
		t.Errorf("--parallel 1: exit %d, %s", code, errOut)
	}
}

// Regression: a workflow whose step's sub-agent waits for approval said
// "…, then `cairn resume w.a`; then `cairn workflow resume w`", though the
// workflow's resume alone continues it (and the agent's resume leaves the
// step unrecorded). It names the workflow's resume only, once, and that
// command, after the decision, carries the workflow to its end.
func TestWorkflowSubAgentApprovalNamesOnlyWorkflowResume(t *testing.T) {
	const writer = "model: {provider: script, script: write.yaml}\n" +
		"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n"
	dir := flowFiles(t, map[string]string{
		"write.yaml":  "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n",
		"helper.yaml": "name: helper\n" + writer,
		"lead.yaml": "name: lead\nmodel: {provider: script, script: lead-script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\n" +
			"agents:\n  - {name: helper, description: writes, file: helper.yaml}\n",
		"lead-script.yaml": "turns:\n  - tool_calls: [{name: delegate, input: {agent: helper, task: write out.txt}}]\n  - text: delegated\n",
		"flow.yaml":        "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: lead.yaml, prompt: go}\n",
	})
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...)
	if code != exitApproval {
		t.Fatalf("run: exit %d\n%s%s; want %d", code, out, errOut, exitApproval)
	}
	if strings.Contains(out+errOut, "`cairn resume w.a`") || strings.Count(errOut, "`cairn workflow resume w`") != 1 {
		t.Fatalf("the advice: %s; want `cairn workflow resume w` once and no `cairn resume w.a`", errOut)
	}
	m := regexp.MustCompile("`cairn approve (\\S+) (\\S+)`").FindStringSubmatch(errOut)
	if m == nil || !strings.HasPrefix(m[1], "w.a.helper-") {
		t.Fatalf("the advice names no call of the sub-agent to approve: %s", errOut)
	}
	if code, _, errOut := cairn(t, append([]string{"approve", m[1], m[2]}, flags...)...); code != exitDone {
		t.Fatalf("approve: exit %d, %s", code, errOut)
	}
	code, out, errOut = cairn(t, append([]string{"workflow", "resume", "w"}, flags...)...)
	if code != exitDone || !strings.Contains(out, "workflow w done") {
		t.Fatalf("cairn workflow resume w: exit %d\n%s%s; want the workflow done", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ws", "out.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("out.txt = %q, %v", b, err)
	}
}

// Regression: with a workflow's record moved aside, `cairn workflow run
// --id ST` of another workflow file took over the step agent ST.a the
// first run left, "resumed it from its agent's boundary" and reported its
// old answer. The run is refused (exit 2), naming the agent and how to go
// on, and nothing is stored; under another id the new file runs.
func TestWorkflowRunRefusesStepAgentOfEarlierRun(t *testing.T) {
	agent := "model: {provider: script, script: %s}\ntools: [{module: builtin, only: [read_file]}]\n"
	dir := flowFiles(t, map[string]string{
		"old.yaml": "turns:\n  - text: old answer\n",
		"new.yaml": "turns:\n  - text: new answer\n",
		"a1.yaml":  "name: a1\n" + strings.Replace(agent, "%s", "old.yaml", 1),
		"a2.yaml":  "name: a2\n" + strings.Replace(agent, "%s", "new.yaml", 1),
		"st.yaml":  "name: st\nworkspace: ws\nsteps:\n  - {name: a, agent: a1.yaml, prompt: go}\n",
		"st2.yaml": "name: st2\nworkspace: ws\nsteps:\n  - {name: a, agent: a2.yaml, prompt: go}\n",
	})
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "ST", filepath.Join(dir, "st.yaml")}, flags...)...); code != exitDone {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	must(t, os.Rename(filepath.Join(store, "workflows", "ST.cbor"), filepath.Join(dir, "ST.cbor.aside")))
	code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "ST", filepath.Join(dir, "st2.yaml")}, flags...)...)
	if code != exitUsage || strings.Contains(out, "old answer") {
		t.Fatalf("second run: exit %d\n%s%s; want exit %d", code, out, errOut, exitUsage)
	}
	for _, want := range []string{"agent ST.a", "mv " + filepath.Join(store, "agents", "ST.a"), "another id (--id)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the error does not say %q: %s", want, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(store, "workflows", "ST.cbor")); !os.IsNotExist(err) {
		t.Errorf("the refused run stored a record: %v", err)
	}
	code, out, errOut = cairn(t, append([]string{"workflow", "run", "--id", "ST2", filepath.Join(dir, "st2.yaml")}, flags...)...)
	if code != exitDone || !strings.Contains(out, "step a done: new answer") {
		t.Fatalf("run under another id: exit %d\n%s%s", code, out, errOut)
	}
}
