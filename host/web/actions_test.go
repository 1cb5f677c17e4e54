package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// awaiting runs the approval agent until it waits for a decision on
// call_1_0.
func (f *fixture) awaiting(id string) *host.AgentFile {
	f.t.Helper()
	af, res := f.run(id, approvalAgent, approvalScript)
	if res.Status != host.StatusAwaitingApproval {
		f.t.Fatalf("run: %s (%s), want awaiting approval", res.Status, res.Reason)
	}
	return af
}

// A call approved through the API is journaled as `cairn approve`
// journals it; resuming through the API runs it, on a run the server
// holds, and a follower of the events sees that run to its end.
func TestApproveThenResumeFinishes(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	af := f.awaiting("ap")
	var pending []host.ApprovalRequest
	f.getJSON("/api/agents/ap/approvals", &pending)
	if len(pending) != 1 || pending[0].Call.ID != "call_1_0" || pending[0].Call.Tool != "write_file" {
		t.Fatalf("approvals: %+v", pending)
	}
	f.decode(f.post("/api/agents/ap/approvals/call_1_0/approve", struct{}{}), http.StatusOK, nil)
	f.getJSON("/api/agents/ap/approvals", &pending)
	if len(pending) != 0 {
		t.Fatalf("approvals after approving: %+v", pending)
	}
	// The same record as Engine.Decide, what `cairn approve` calls, writes.
	f.awaiting("cli")
	if err := f.eng.Decide(t.Context(), "cli", "call_1_0", host.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	api, cli := lastRecord(t, f, "ap"), lastRecord(t, f, "cli")
	if api.Type != checkpoint.RecPhase || api.Phase != checkpoint.PhaseApproved || api.Call != "call_1_0" ||
		api.Type != cli.Type || api.Phase != cli.Phase || api.Round != cli.Round || api.Tool != cli.Tool || api.Reason != cli.Reason {
		t.Fatalf("journaled %+v, cairn approve journals %+v", api, cli)
	}
	before := f.history("ap")
	var started struct{ Run, Status string }
	f.decode(f.post("/api/agents/ap/resume", map[string]string{"strategy": "seal"}), http.StatusAccepted, &started)
	if !strings.HasPrefix(started.Run, "run-") {
		t.Fatalf("resume answered %+v", started)
	}
	data, _ := sse(t, f.do("/api/agents/ap/events?follow=1&after="+lineCount(before), nil, ""))
	if !bytes.Contains(data, []byte(`"type":"tool_end"`)) || !bytes.Contains(data, []byte(`"type":"run_end"`)) || !bytes.Contains(data, []byte(started.Run)) {
		t.Fatalf("the resumed run's events:\n%s", data)
	}
	f.srv.wg.Wait() // the run has released the agent
	if b, _ := os.ReadFile(filepath.Join(af.WorkspaceDir(), "out.txt")); string(b) != "hello" {
		t.Fatalf("out.txt = %q after approval and resume", b)
	}
	var v agentView
	f.getJSON("/api/agents/ap", &v)
	if v.Status != "done" || v.Held {
		t.Fatalf("after the resume: %+v", v)
	}
	var runs []host.RunView
	f.getJSON("/api/agents/ap/runs", &runs)
	if len(runs) != 2 || runs[1].Run != started.Run || runs[1].ResumedFrom != runs[0].Run || runs[1].Status != "done" {
		t.Fatalf("runs: %+v", runs)
	}
}

// lastRecord is the newest record of an agent's open round.
func lastRecord(t *testing.T, f *fixture, id string) checkpoint.Record {
	t.Helper()
	in, err := host.Inspect(t.Context(), f.store, id)
	if err != nil || len(in.Tail) == 0 {
		t.Fatalf("agent %s: %v, tail %d records", id, err, len(in.Tail))
	}
	return in.Tail[len(in.Tail)-1]
}

func lineCount(b []byte) string { return strconv.Itoa(bytes.Count(b, []byte("\n"))) }

// A denial's reason reaches the model, as with `cairn deny --reason`.
func TestDenyWithReason(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	af := f.awaiting("ap")
	f.decode(f.post("/api/agents/ap/approvals/call_1_0/deny", map[string]string{"reason": "not today"}), http.StatusOK, nil)
	f.decode(f.post("/api/agents/ap/approvals/call_1_0/deny", map[string]string{}), http.StatusConflict, nil)
	if err := f.resumeAndWait("ap"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(af.WorkspaceDir(), "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("the denied call ran: %v", err)
	}
	var conv []round
	f.getJSON("/api/agents/ap/conversation?round=1", new(round))
	f.getJSON("/api/agents/ap/conversation", &conv)
	for _, m := range conv[0].Messages {
		if m.CallID == "call_1_0" && (!m.IsError || !strings.Contains(m.Text, "not today")) {
			t.Fatalf("the model read %+v, want the denial with its reason", m)
		}
	}
}

// resumeAndWait resumes through the API and waits for the run to end.
func (f *fixture) resumeAndWait(id string) error {
	resp := f.post("/api/agents/"+id+"/resume", struct{}{})
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return errors.New("resume: " + resp.Status)
	}
	f.srv.wg.Wait()
	return nil
}

// While another holder has the agent's lock, resume and approve answer
// 409 with that holder, as `cairn resume` exits locked, and change
// nothing; pause asks that holder to stop.
func TestLockedAgentIsConflict(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	lock, err := f.store.Lock("ap", checkpoint.Holder{PID: os.Getpid(), Host: hostname(t), Run: "run-elsewhere", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	for _, path := range []string{"/api/agents/ap/resume", "/api/agents/ap/approvals/call_1_0/approve"} {
		var e apiError
		f.decode(f.post(path, struct{}{}), http.StatusConflict, &e)
		if e.Holder == nil || e.Holder.Run != "run-elsewhere" || e.Holder.PID != os.Getpid() || !strings.Contains(e.Error, "locked") {
			t.Fatalf("%s: %+v, want the holder", path, e)
		}
	}
	var v agentView
	f.getJSON("/api/agents/ap", &v)
	if v.Status != "running" || len(v.Awaiting) != 1 || v.Held {
		t.Fatalf("while locked elsewhere: %+v", v)
	}
	// Pause asks the holder, through the store, to stop at its boundary.
	var answer map[string]any
	f.decode(f.post("/api/agents/ap/pause", struct{}{}), http.StatusAccepted, &answer)
	if answer["status"] != "pause requested" {
		t.Fatalf("pause of a run held elsewhere: %v", answer)
	}
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Snapshot bookmarks the agent and fork starts a new one from the
// bookmark, as `cairn snapshot` and `cairn fork --from --as` do.
func TestSnapshotAndFork(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	var b bookmark
	f.decode(f.post("/api/agents/w/snapshot", map[string]string{"label": "first"}), http.StatusOK, &b)
	if b.Label != "first" || b.Round != 3 {
		t.Fatalf("snapshot: %+v", b)
	}
	var forked struct {
		Agent, From string
		Round       int
	}
	f.decode(f.post("/api/agents/w/fork", map[string]string{"from": "first", "as": "w2"}), http.StatusCreated, &forked)
	if forked.Agent != "w2" || forked.From != "w" || forked.Round != 3 {
		t.Fatalf("fork: %+v", forked)
	}
	f.decode(f.post("/api/agents/w/fork", map[string]string{"from": "nope", "as": "w3"}), http.StatusNotFound, nil)
	f.decode(f.post("/api/agents/w/fork", map[string]string{"from": "first", "as": "w2"}), http.StatusConflict, nil)
	var list []agentLine
	f.getJSON("/api/agents", &list)
	if len(list) != 2 || list[1].Agent != "w2" || list[1].Lineage == nil || list[1].Lineage.Agent != "w" {
		t.Fatalf("agents after the fork: %+v", list)
	}
	var raw []map[string]json.RawMessage
	f.getJSON("/api/agents", &raw)
	if !strings.HasPrefix(string(raw[1]["lineage"]), `{"agent":"w","round":3`) {
		t.Fatalf("the lineage as the web view reads it: %s", raw[1]["lineage"])
	}
	var v agentView
	f.getJSON("/api/agents/w", &v)
	if len(v.Bookmarks) != 1 || v.Bookmarks[0].Label != "first" {
		t.Fatalf("bookmarks: %+v", v.Bookmarks)
	}
	var e apiError
	f.decode(f.post("/api/agents/w/snapshot", map[string]string{"label": "../x"}), http.StatusBadRequest, &e)
	if !strings.Contains(e.Error, "bookmark label") {
		t.Errorf("a bad label: %q, want it named a bookmark label", e.Error) // it once said "agent id"
	}
	req, _ := http.NewRequest(http.MethodPost, f.http.URL+"/api/agents/w/snapshot", strings.NewReader(`{"label":"two"}{"x":1}`))
	req.Header.Set("Authorization", "Bearer "+f.srv.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	f.decode(resp, http.StatusBadRequest, nil) // data after the object was once ignored
	f.decode(f.post("/api/agents/w/resume", map[string]string{"strategy": "guess"}), http.StatusBadRequest, nil)
	f.decode(f.post("/api/agents/w/fork", map[string]string{"as": "a/b"}), http.StatusBadRequest, nil)
	f.decode(f.post("/api/agents/w/snapshot", "not an object"), http.StatusBadRequest, nil)
}
