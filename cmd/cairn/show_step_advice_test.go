package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/host"
)

// Regression: `cairn show` of a workflow's step agent said `cairn resume
// AGENT` carries out its decided calls or says what became of its calls
// in flight, which resumes the agent alone and leaves the workflow without
// the step's output. It names the workflow's resume; an agent no workflow
// runs is still pointed to `cairn resume`.
func TestShowOfWorkflowStepAdvisesWorkflowResume(t *testing.T) {
	dir := flowFiles(t, map[string]string{
		"write.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n",
		"asker.yaml": "name: asker\nmodel: {provider: script, script: write.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n",
		"reader.yaml": "name: reader\nmodel: {provider: script, script: read.yaml}\n" +
			"tools: [{module: builtin, only: [read_file]}]\nlimits: {max_rounds: 1}\n",
		"read.yaml": "turns:\n  - tool_calls: [{name: read_file, input: {path: notes.md}}]\n" +
			"  - tool_calls: [{name: read_file, input: {path: notes.md}}]\n  - text: done reading\n",
		"flow.yaml": "name: f\nworkspace: ws\nsteps:\n  - {name: a, agent: asker.yaml, prompt: go}\n  - {name: r, agent: reader.yaml, prompt: go}\n",
	})
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitApproval {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	if code, _, errOut := cairn(t, append([]string{"approve", "wf.a", "call_1_0"}, flags...)...); code != exitDone {
		t.Fatalf("approve: exit %d, %s", code, errOut)
	}
	code, out, errOut := cairn(t, "show", "--store", store, "wf.a")
	if code != exitDone || !strings.Contains(out, "`cairn workflow resume wf` carries the decisions out") || strings.Contains(out, "cairn resume wf.a") {
		t.Errorf("show of a step's agent with its calls decided: exit %d\n%s%s\nwant it to name `cairn workflow resume wf`", code, out, errOut)
	}

	// Step r's agent, paused by its max_rounds, stopped in a round with a
	// call in flight.
	s, err := host.OpenStore(store)
	must(t, err)
	lock, err := s.Lock("wf.r", checkpoint.ThisProcess("test"))
	must(t, err)
	rec, log, err := s.Open("wf.r")
	must(t, err)
	turn := conversation.Message{Role: conversation.RoleAssistant, Text: "one more",
		ToolCalls: []conversation.ToolCall{{ID: "call_x", Name: "read_file", Input: `{"path":"notes.md"}`}}}
	must(t, log.Append(
		checkpoint.Record{Type: checkpoint.RecRunStarted, Time: time.Now(), Run: &checkpoint.RunInfo{ID: "run-x", Started: time.Now(), FirstRound: rec.State.Round}},
		checkpoint.Record{Type: checkpoint.RecTurn, Time: time.Now(), Round: rec.State.Round + 1, Message: &turn}))
	must(t, log.Sync())
	must(t, log.Close())
	must(t, lock.Unlock())
	code, out, errOut = cairn(t, "show", "--store", store, "wf.r")
	if code != exitDone || !strings.Contains(out, "call_x") || !strings.Contains(out, "cairn workflow resume wf") || strings.Contains(out, "cairn resume wf.r") {
		t.Errorf("show of a step's agent with a call in flight: exit %d\n%s%s\nwant it to name `cairn workflow resume wf`", code, out, errOut)
	}

	// Once the workflow has recorded its steps, their agents are resumed
	// by themselves.
	if code, out, errOut := cairn(t, append([]string{"workflow", "resume", "--max-rounds", "5", "wf"}, flags...)...); code != exitDone {
		t.Fatalf("workflow resume: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := cairn(t, "show", "--store", store, "wf.r"); code != exitDone || strings.Contains(out, "cairn workflow resume") {
		t.Errorf("show of a recorded step's agent: exit %d\n%s", code, out)
	}
}
