package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

func TestRuleMatching(t *testing.T) {
	tests := []struct {
		rule  Rule
		call  conversation.ToolCall
		match bool
	}{
		{Rule{Tool: "write_file"}, conversation.ToolCall{Name: "write_file", Input: `{}`}, true},
		{Rule{Tool: "write_file"}, conversation.ToolCall{Name: "read_file", Input: `{}`}, false},
		{Rule{Tool: "*"}, conversation.ToolCall{Name: "grep", Input: `not json`}, true},
		{Rule{Tool: "edit_*"}, conversation.ToolCall{Name: "edit_file"}, true},
		{Rule{Tool: "write_file", Args: map[string]string{"path": "drafts/**"}},
			conversation.ToolCall{Name: "write_file", Input: `{"path":"drafts/a/b.md"}`}, true},
		{Rule{Tool: "write_file", Args: map[string]string{"path": "drafts/**"}},
			conversation.ToolCall{Name: "write_file", Input: `{"path":"notes.md"}`}, false},
		{Rule{Tool: "write_file", Args: map[string]string{"path": "drafts/**"}},
			conversation.ToolCall{Name: "write_file", Input: `{"content":"x"}`}, false},
		{Rule{Tool: "write_file", Args: map[string]string{"path": "drafts/**"}},
			conversation.ToolCall{Name: "write_file", Input: `{"path": 7`}, false},
		{Rule{Tool: "read_file", Args: map[string]string{"limit": "1?"}},
			conversation.ToolCall{Name: "read_file", Input: `{"limit":10}`}, true},
	}
	for _, tt := range tests {
		if got := tt.rule.matches(tt.call); got != tt.match {
			t.Errorf("%+v on %s %s: match %v, want %v", tt.rule, tt.call.Name, tt.call.Input, got, tt.match)
		}
	}
	rules := []Rule{{Tool: "write_file", Action: ActionDeny}, {Tool: "*", Action: ActionAsk}}
	if a, i := decide(rules, conversation.ToolCall{Name: "write_file"}); a != ActionDeny || i != 0 {
		t.Errorf("first match: %s %d", a, i)
	}
	if a, i := decide(nil, conversation.ToolCall{Name: "write_file"}); a != ActionAllow || i != -1 {
		t.Errorf("no rules: %s %d, want allow", a, i)
	}
}

func TestApprovalRulesValidated(t *testing.T) {
	for _, bad := range []string{
		`[{tool: write_file, action: maybe}]`,
		`[{tool: "[", action: ask}]`,
		`[{action: ask}]`,
		`[{tool: write_file, args: {path: "a/[b"}, action: ask}]`,
	} {
		_, err := ParseAgentFile([]byte("name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\napprovals: "+bad), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "approvals[0]") {
			t.Errorf("%s: %v, want an error naming approvals[0]", bad, err)
		}
	}
}

const approvalAgent = `
name: approvals
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
approvals:
  - {tool: write_file, args: {path: "drafts/**"}, action: allow}
  - {tool: write_file, action: ask}
  - {tool: edit_file, action: deny}
`

const approvalScript = `
turns:
  - tool_calls:
      - {name: write_file, input: {path: out.txt, content: hello}}
      - {name: list_dir, input: {}}
      - {name: write_file, input: {path: drafts/d.txt, content: draft}}
      - {name: edit_file, input: {path: drafts/d.txt, old: draft, new: edited}}
  - text: finished
`

// approvalRun runs the approval agent until it stops, with opts' approver.
func approvalRun(t *testing.T, eng *Engine, opts RunOptions) (*AgentFile, *Result, []Event) {
	t.Helper()
	af := agentIn(t, approvalAgent, approvalScript)
	opts.Agent, opts.ID, opts.Prompt = af, "ap", "go"
	var events []Event
	opts.OnEvent = func(e Event) { events = append(events, e) }
	res, err := eng.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return af, res, events
}

func resultOf(t *testing.T, store checkpoint.Store, call string) conversation.Message {
	t.Helper()
	rec, err := store.Read("ap")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rec.State.Messages {
		if m.CallID == call {
			return m
		}
	}
	t.Fatalf("no result for %s", call)
	return conversation.Message{}
}

// With no one to ask, the run pauses awaiting approval: the calls the
// rules allow have run, the one that needs a person has not, and the
// request is in the store. Approving it and resuming runs it.
func TestApprovalPausesAndSurvivesInTheStore(t *testing.T) {
	eng, store := fileEngine(t)
	af, res, events := approvalRun(t, eng, RunOptions{})
	if res.Status != StatusAwaitingApproval || !strings.Contains(res.Reason, "call_1_0 (write_file)") {
		t.Fatalf("run: %s (%s), want awaiting approval of call_1_0", res.Status, res.Reason)
	}
	if res.AwaitingCall() != "call_1_0" {
		t.Fatalf("the call awaiting: %q", res.Awaiting)
	}
	ws := af.WorkspaceDir()
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); !os.IsNotExist(err) {
		t.Fatalf("the call awaiting approval ran: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "drafts/d.txt")); string(b) != "draft" {
		t.Fatalf("drafts/d.txt = %q: the allowed call should have run and the denied edit not", b)
	}
	if !hasEvent(events, EventApprovalRequired, "call_1_0") {
		t.Error("no approval_required event for call_1_0")
	}
	pending, err := Pending(t.Context(), store, "ap")
	if err != nil || len(pending) != 1 || pending[0].Call.ID != "call_1_0" || pending[0].Call.Tool != "write_file" {
		t.Fatalf("pending: %+v, %v", pending, err)
	}
	if err := eng.Decide(t.Context(), "ap", "call_1_1", Decision{Approved: true}); !errors.Is(err, ErrNotAwaiting) ||
		!strings.Contains(err.Error(), "call_1_0 (write_file)") {
		t.Fatalf("approving a call that does not wait: %v", err)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "ap"})
	if err != nil || res.Status != StatusAwaitingApproval {
		t.Fatalf("resume before a decision: %+v, %v; want awaiting approval again", res, err)
	}
	if err := eng.Decide(t.Context(), "ap", "call_1_0", Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "ap"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "hello" {
		t.Fatalf("out.txt = %q after approval", b)
	}
	if m := resultOf(t, store, "call_1_3"); !m.IsError || !strings.Contains(m.Text, "approvals[2]") {
		t.Fatalf("the denied edit's result: %+v", m)
	}
	if m := resultOf(t, store, "call_1_1"); m.IsError {
		t.Fatalf("list_dir, which ran before the pause, was not kept: %+v", m)
	}
}

// A denial recorded while the agent waits reaches the model with its
// reason; the call never runs.
func TestDenialReachesTheModel(t *testing.T) {
	eng, store := fileEngine(t)
	af, _, _ := approvalRun(t, eng, RunOptions{})
	if err := eng.Decide(t.Context(), "ap", "call_1_0", Decision{Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "ap"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if m := resultOf(t, store, "call_1_0"); !m.IsError || !strings.Contains(m.Text, "not today") {
		t.Fatalf("the model read %+v, want the denial with its reason", m)
	}
	if _, err := os.Stat(filepath.Join(af.WorkspaceDir(), "out.txt")); !os.IsNotExist(err) {
		t.Fatal("the denied call ran")
	}
}

// Regression: a decision made between runs (cairn approve, the web view)
// left no trace in the agent's history, so its timeline showed the call as
// still waiting. Decide adds an approval_decided event, before the resume
// that acts on it.
func TestDecisionBetweenRunsInTheHistory(t *testing.T) {
	eng, store := fileEngine(t)
	approvalRun(t, eng, RunOptions{})
	if err := eng.Decide(t.Context(), "ap", "call_1_0", Decision{Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	var decided []Event
	err := ReadHistory(t.Context(), store, "ap", false, func(e Event, _ []byte) error {
		if e.Type == EventApprovalDecided && e.Call != nil && e.Call.ID == "call_1_0" {
			decided = append(decided, e)
		}
		return nil
	})
	if err != nil || len(decided) != 1 || decided[0].Status != "denied" || decided[0].Reason != "not today" ||
		decided[0].Agent != "ap" || decided[0].Round != 1 {
		t.Fatalf("approval_decided events of call_1_0: %+v, %v", decided, err)
	}
}

// An unattended run denies what needs a person, and the model reads why.
func TestAutoDeny(t *testing.T) {
	eng, store := fileEngine(t)
	_, res, _ := approvalRun(t, eng, RunOptions{AutoDeny: true})
	if res.Status != StatusDone {
		t.Fatalf("status %s (%s), want done", res.Status, res.Reason)
	}
	if m := resultOf(t, store, "call_1_0"); !m.IsError || !strings.Contains(m.Text, "unattended") {
		t.Fatalf("the model read %+v, want an unattended denial", m)
	}
}

// An approver is asked once per call that needs it, and its answer holds.
func TestApproverAsked(t *testing.T) {
	eng, _ := fileEngine(t)
	var asked []string
	approve := func(_ context.Context, req ApprovalRequest) (Decision, error) {
		asked = append(asked, req.Call.ID+" "+req.Call.Tool)
		return Decision{Approved: true}, nil
	}
	af, res, events := approvalRun(t, eng, RunOptions{Approver: approve})
	if res.Status != StatusDone || len(asked) != 1 || asked[0] != "call_1_0 write_file" {
		t.Fatalf("status %s, asked %v; want done after asking about call_1_0 only", res.Status, asked)
	}
	if b, _ := os.ReadFile(filepath.Join(af.WorkspaceDir(), "out.txt")); string(b) != "hello" {
		t.Fatalf("out.txt = %q", b)
	}
	if !hasEvent(events, EventApprovalDecided, "call_1_0") {
		t.Error("no approval_decided event")
	}
	// Regression: a call a rule denied (edit_file, call_1_3) left no event
	// at all, so nothing showed it on a terminal or in the web view.
	if !hasEvent(events, EventApprovalDecided, "call_1_3") {
		t.Error("no approval_decided event for the call a rule denied")
	}
}

func hasEvent(events []Event, typ EventType, call string) bool {
	for _, e := range events {
		if e.Type == typ && e.Call != nil && e.Call.ID == call {
			return true
		}
	}
	return false
}

// Regression: a run that stopped awaiting approval reported 0 tokens,
// though its model had answered the round it stopped in; that turn's
// usage is spent, and its run_end and Result say so.
func TestAwaitingRunReportsItsTurn(t *testing.T) {
	eng, _ := fileEngine(t)
	_, res, events := approvalRun(t, eng, RunOptions{})
	if res.Status != StatusAwaitingApproval || res.Usage.Total() == 0 {
		t.Fatalf("run: %s with usage %+v, want awaiting approval with the turn's tokens", res.Status, res.Usage)
	}
	if end := eventOf(events, EventRunEnd); end == nil || end.Usage == nil || end.Usage.Total() != res.Usage.Total() {
		t.Fatalf("run_end %+v, want the Result's usage %+v", end, res.Usage)
	}
}
