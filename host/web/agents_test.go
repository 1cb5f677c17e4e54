package web

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

const doneAgent = `
name: writer
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`

const doneScript = `
turns:
  - text: Writing the notes.
    tool_calls:
      - {name: write_file, input: {path: notes.txt, content: "one\ntwo\n"}}
  - text: Changing a line.
    tool_calls:
      - {name: write_file, input: {path: notes.txt, content: "one\nthree\n"}}
  - text: done
`

// Every read endpoint answers for an agent that ran to its end, with what
// the command line prints for it.
func TestReadEndpoints(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)

	var list []agentLine
	f.getJSON("/api/agents", &list)
	if len(list) != 1 || list[0].Agent != "w" || list[0].Status != "done" || list[0].Rounds != 3 || list[0].ToolCalls != 2 {
		t.Fatalf("agents: %+v", list)
	}
	var v agentView
	f.getJSON("/api/agents/w", &v)
	if v.Status != "done" || v.Messages != 6 || v.Usage.Total() == 0 || !strings.HasSuffix(v.Workspace, "workspace") {
		t.Fatalf("agent: %+v", v)
	}
	var conv []round
	f.getJSON("/api/agents/w/conversation", &conv)
	if len(conv) != 3 || conv[0].Messages[0].Text != "go" || len(conv[1].Messages) != 2 || conv[2].Messages[0].Text != "done" {
		t.Fatalf("conversation: %+v", conv)
	}
	var r2 round
	f.getJSON("/api/agents/w/conversation?round=2", &r2)
	if r2.Round != 2 || r2.Messages[0].ToolCalls[0].Name != "write_file" || r2.Messages[1].CallID != r2.Messages[0].ToolCalls[0].ID {
		t.Fatalf("round 2: %+v", r2)
	}
	var runs []host.RunView
	f.getJSON("/api/agents/w/runs", &runs)
	if len(runs) != 1 || runs[0].Status != "done" || runs[0].Rounds != 3 || runs[0].Ended == nil {
		t.Fatalf("runs: %+v", runs)
	}
	var diff struct {
		Round   int      `json:"round"`
		Changes []change `json:"changes"`
	}
	f.getJSON("/api/agents/w/diff", &diff)
	if diff.Round != 2 || len(diff.Changes) != 1 || !slices.Equal(diff.Changes[0].Lines, []string{" one", "+three", "-two"}) {
		t.Fatalf("diff: %+v", diff)
	}
	f.getJSON("/api/agents/w/diff?round=1", &diff)
	if diff.Round != 1 || !slices.Equal(diff.Changes[0].Lines, []string{"+one", "+two"}) {
		t.Fatalf("diff of round 1: %+v", diff)
	}
	var pending []host.ApprovalRequest
	f.getJSON("/api/agents/w/approvals", &pending)
	if pending == nil || len(pending) != 0 {
		t.Fatalf("approvals: %+v", pending)
	}
}

// Unknown agents, rounds and bad numbers get a status that says so, and
// a JSON error.
func TestReadErrors(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for path, status := range map[string]int{
		"/api/agents/nobody":                 http.StatusNotFound,
		"/api/agents/nobody/events":          http.StatusNotFound,
		"/api/agents/nobody/approvals":       http.StatusNotFound,
		"/api/agents/w/conversation?round=9": http.StatusNotFound,
		// Regression: a round that is no number was 404, not 400.
		"/api/agents/w/conversation?round=abc": http.StatusBadRequest,
		"/api/agents/w/diff?round=3":           http.StatusNotFound,
		"/api/agents/w/diff?round=x":           http.StatusBadRequest,
		"/api/agents/w/events?after=-1":        http.StatusBadRequest,
		// Regression: an unknown run gave 200 and nothing, where `cairn
		// events --run` says there is no such run.
		"/api/agents/w/events?run=nope": http.StatusNotFound,
		// Regression: the mux's own 404 and 405 were plain text.
		"/api/nothing":         http.StatusNotFound,
		"/api/agents/w/resume": http.StatusMethodNotAllowed,
		"/assets/secret.txt":   http.StatusNotFound,
	} {
		var e apiError
		resp := f.do(path, nil, "")
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q, want application/json", path, ct)
		}
		f.decode(resp, status, &e)
		if e.Error == "" {
			t.Errorf("%s: no error message", path)
		}
	}
}

// The events endpoint gives the lines `cairn events --json` prints, byte
// for byte: as JSON Lines, and as the data of Server-Sent Events whose ids
// count the lines, so ?after=N goes on where a reader stopped.
func TestEventsAreTheHistoryByteForByte(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	want := f.history("w")
	resp := f.do("/api/agents/w/events", nil, "")
	var got bytes.Buffer
	got.ReadFrom(resp.Body)
	if resp.Header.Get("Content-Type") != "application/x-ndjson" || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("JSON Lines differ from the history:\n%s\nwant\n%s", got.Bytes(), want)
	}
	data, ids := sse(t, f.do("/api/agents/w/events?follow=1", nil, ""))
	if !bytes.Equal(data, want) {
		t.Fatalf("SSE data differs from the history:\n%s\nwant\n%s", data, want)
	}
	lines := bytes.SplitAfter(want, []byte("\n"))
	lines = lines[:len(lines)-1]
	if len(ids) != len(lines) || ids[len(ids)-1] != strconv.Itoa(len(lines)) {
		t.Fatalf("ids %v for %d lines", ids, len(lines))
	}
	data, _ = sse(t, f.do("/api/agents/w/events", nil, "", "Accept", "text/event-stream", "Last-Event-ID", "3"))
	if !bytes.Equal(data, bytes.Join(lines[3:], nil)) {
		t.Fatalf("after 3 lines: %s", data)
	}
}
