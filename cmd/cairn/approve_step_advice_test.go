package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Regression: `cairn approve` and `cairn deny` of a call of a workflow's
// step agent (or of a sub-agent under one) advised "`cairn resume
// <root>` continues it", which resumes the agent alone and leaves the
// workflow paused without the step's output. They name the workflow's
// resume, and running exactly the command they print carries the workflow
// on to done.
func TestApproveOfWorkflowStepAdvisesWorkflowResume(t *testing.T) {
	const writer = "model: {provider: script, script: write.yaml}\n" +
		"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n"
	files := map[string]string{
		"write.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n",
		"asker.yaml": "name: asker\n" + writer,
		"lead.yaml": "name: lead\nmodel: {provider: script, script: lead-script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\n" +
			"agents:\n  - {name: helper, description: writes, file: helper.yaml}\n",
		"helper.yaml":      "name: helper\n" + writer,
		"lead-script.yaml": "turns:\n  - tool_calls: [{name: delegate, input: {agent: helper, task: write out.txt}}]\n  - text: delegated\n",
	}
	for _, tc := range []struct {
		name, agentFile, decide, want string
	}{
		{"approve of the step's agent", "asker.yaml", "approve", "hi"},
		{"deny of the step's agent", "asker.yaml", "deny", ""},
		{"approve of a sub-agent under the step", "lead.yaml", "approve", "hi"},
		{"deny of a sub-agent under the step", "lead.yaml", "deny", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: " + tc.agentFile + ", prompt: go}\n"}
			for k, v := range files {
				fs[k] = v
			}
			dir := flowFiles(t, fs)
			flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
			code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", filepath.Join(dir, "flow.yaml")}, flags...)...)
			m := regexp.MustCompile("`cairn approve (\\S+) (\\S+)`").FindStringSubmatch(errOut)
			if code != exitApproval || m == nil || !strings.HasPrefix(m[1], "wf.a") {
				t.Fatalf("run: exit %d, %s; want exit %d naming the agent of step a and its call", code, errOut, exitApproval)
			}
			code, out, errOut := cairn(t, append([]string{tc.decide, m[1], m[2]}, flags...)...)
			if code != exitDone || !strings.Contains(out, "; `cairn workflow resume wf` continues it") {
				t.Fatalf("%s %s %s: exit %d, %s%s; want it to advise `cairn workflow resume wf`", tc.decide, m[1], m[2], code, out, errOut)
			}
			advised := strings.Fields(regexp.MustCompile("`([^`]+)` continues it").FindStringSubmatch(out)[1])
			code, out, errOut = cairn(t, append(advised[1:], flags...)...)
			if code != exitDone || !strings.Contains(out, "workflow wf done") {
				t.Fatalf("%s: exit %d\n%s%s; want the workflow done", strings.Join(advised, " "), code, out, errOut)
			}
			b, err := os.ReadFile(filepath.Join(dir, "ws", "out.txt"))
			if got := string(b); got != tc.want || tc.want == "" && !os.IsNotExist(err) {
				t.Fatalf("out.txt = %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// An agent no workflow runs is still continued by `cairn resume` of the
// root of its tree.
func TestApproveOfPlainAgentAdvisesResume(t *testing.T) {
	dir := flowFiles(t, map[string]string{
		"write.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n",
		"asker.yaml": "name: asker\nmodel: {provider: script, script: write.yaml}\nworkspace: ws\n" +
			"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n"})
	flags := []string{"--store", t.TempDir(), "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "solo", "-f", filepath.Join(dir, "asker.yaml")}, flags...)...); code != exitApproval {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	code, out, errOut := cairn(t, append([]string{"approve", "solo", "call_1_0"}, flags...)...)
	if code != exitDone || !strings.Contains(out, "; `cairn resume solo` continues it") {
		t.Fatalf("approve: exit %d, %s%s", code, out, errOut)
	}
}
