package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// sessionAgent is an agent file of the built-in tools and the hostile
// module, with the given approval rules.
func sessionAgent(t *testing.T, approvals string) (*AgentFile, string) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	src := `name: sess
model: {provider: script}
workspace: ws
tools:
  - {module: builtin}
  - {module: ` + hostileWasm + `, only: [spin, append], grant: {workspace: rw}, limits: {timeout: 1m}}
` + approvals
	af, err := ParseAgentFile([]byte(src), dir)
	if err != nil {
		t.Fatal(err)
	}
	return af, ws
}

func TestSessionCallIsARound(t *testing.T) {
	eng, store := fileEngine(t)
	af, ws := sessionAgent(t, "")
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Call(context.Background(), "write_file", json.RawMessage(`{"path":"a.txt","content":"hi"}`), nil)
	if err != nil || out.IsError {
		t.Fatalf("write_file: %+v %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "hi" {
		t.Errorf("workspace a.txt = %q, want hi", b)
	}
	out, err = s.Call(context.Background(), "write_file", json.RawMessage(`{"path":7}`), nil)
	if err != nil || !out.IsError || !strings.Contains(out.Output, "path") {
		t.Errorf("bad arguments: %+v %v, want an error result naming the argument", out, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Read("s1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.State.Round != 2 || len(rec.State.Messages) != 4 || rec.Interrupted() {
		t.Errorf("state: round %d, %d messages, interrupted %v; want 2 committed rounds of 2 messages",
			rec.State.Round, len(rec.State.Messages), rec.Interrupted())
	}
	if _, changes, err := eng.Changes(t.Context(), "s1", 0); err != nil || len(changes) != 1 || changes[0].Path != "a.txt" {
		t.Errorf("changes: %+v %v, want a.txt", changes, err)
	}
}

// A call whose context ends while it runs is stopped, its changes are
// discarded, and its round is committed with a result that says so, and
// a tool_end (the web view once showed such a call running for ever).
func TestSessionCancelledCallChangesNothing(t *testing.T) {
	eng, store := fileEngine(t)
	af, ws := sessionAgent(t, "")
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var ends []string
	s.r.onEvent = func(e Event) {
		if e.Type == EventToolStart && e.Call.Tool == "spin" {
			close(started)
		}
		if e.Type == EventToolEnd {
			ends = append(ends, e.Call.ID+" "+string(e.Call.Outcome))
		}
	}
	go func() { <-started; cancel() }()
	out, err := s.Call(ctx, "spin", json.RawMessage(`{}`), nil)
	if err != nil || !out.IsError {
		t.Fatalf("cancelled spin: %+v %v, want an error result", out, err)
	}
	entries, _ := os.ReadDir(ws)
	if len(entries) != 0 {
		t.Errorf("workspace has %d entries after a cancelled call", len(entries))
	}
	if len(ends) != 1 || !strings.HasPrefix(ends[0], "mcp-1 ") {
		t.Errorf("tool_end events %q, want one for the cancelled call mcp-1", ends)
	}
	out, err = s.Call(context.Background(), "append", json.RawMessage(`{"path":"b.txt","line":"x"}`), nil)
	if err != nil || out.IsError || out.Round != 2 {
		t.Fatalf("a call after the cancelled one: %+v %v", out, err)
	}
	if rec, _ := store.Read("s2"); rec.State.Round != 2 {
		t.Errorf("round %d committed, want 2", rec.State.Round)
	}
}

// An ask rule puts the call to the session's approver; without one the
// call is denied with the reason.
func TestSessionAsks(t *testing.T) {
	eng, _ := fileEngine(t)
	af, ws := sessionAgent(t, "approvals: [{tool: write_file, action: ask}]\n")
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "s3"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := json.RawMessage(`{"path":"a.txt","content":"hi"}`)
	out, err := s.Call(context.Background(), "write_file", in, nil)
	if err != nil || !out.IsError || !strings.Contains(out.Output, "denied") {
		t.Fatalf("no approver: %+v %v, want a denial", out, err)
	}
	var asked ApprovalRequest
	yes := func(_ context.Context, req ApprovalRequest) (Decision, error) {
		asked = req
		return Decision{Approved: true}, nil
	}
	out, err = s.Call(context.Background(), "write_file", in, yes)
	if err != nil || out.IsError || asked.Call.Tool != "write_file" {
		t.Fatalf("approved: %+v %v (asked %+v)", out, err, asked)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "hi" {
		t.Errorf("a.txt = %q after approval", b)
	}
}

// A session of an agent a crash left mid-call seals the call and takes
// the next round.
func TestSessionSealsInterruptedCall(t *testing.T) {
	eng, store := fileEngine(t)
	af, ws := sessionAgent(t, "")
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "s4"})
	if err != nil {
		t.Fatal(err)
	}
	// Leave round 1 as a crash would: the turn and the executing phase
	// journaled, no result.
	c := conversation.ToolCall{ID: "mcp-1", Name: "write_file", Input: `{"path":"a.txt","content":"x"}`}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.r.log.Append(checkpoint.Record{Type: checkpoint.RecTurn, Time: now(), Round: 1,
		Message: &conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{c}}},
		phaseRecord(1, c, checkpoint.PhaseExecuting, "")))
	must(s.r.log.Sync())
	must(s.r.close())
	s.lock.Unlock()
	s, err = eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "s4"})
	must(err)
	defer s.Close()
	rec, err := store.Read("s4")
	must(err)
	if len(rec.Tail) > 0 || rec.State.Round != 1 || !strings.Contains(rec.State.Messages[1].Text, "interrupted") {
		t.Fatalf("after reopening: round %d, open round %v, messages %+v", rec.State.Round, rec.Tail, rec.State.Messages)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("the sealed call's file exists: %v", err)
	}
	out, err := s.Call(context.Background(), "list_dir", json.RawMessage(`{}`), nil)
	if err != nil || out.Round != 2 {
		t.Errorf("next call: %+v %v, want round 2", out, err)
	}
}

// Regression: a session that could not start a new agent (its workspace
// was no directory) left the agent in the store, made but never run; a
// run that fails to start leaves none, and so does a session now.
func TestSessionThatFailsToStartLeavesNoAgent(t *testing.T) {
	eng, store := fileEngine(t)
	af, ws := sessionAgent(t, "")
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	_, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "s9"})
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), ws) {
		t.Fatalf("open a session on a missing workspace: %v, want ErrMissing naming it", err)
	}
	if store.Exists("s9") {
		t.Fatal("the agent stays in the store after its session failed to start")
	}
}

// Pause stops a session's agent at its round boundary: the run ends
// paused on request, the agent is released, the session refuses later
// calls saying so, and a new session goes on from there. (A pause was once
// accepted and never happened.)
func TestSessionPause(t *testing.T) {
	eng, store := fileEngine(t)
	af, _ := sessionAgent(t, "")
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "sp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := json.RawMessage(`{"path":"a.txt","content":"hi"}`)
	if out, err := s.Call(context.Background(), "write_file", write, nil); err != nil || out.IsError {
		t.Fatalf("first call: %+v %v", out, err)
	}
	if err := eng.Pause(context.Background(), "sp"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call(context.Background(), "write_file", write, nil); !errors.Is(err, ErrSessionPaused) {
		t.Fatalf("a call after the pause: %v, want ErrSessionPaused", err)
	}
	select {
	case <-s.Paused():
	default:
		t.Fatal("Paused is not closed")
	}
	sum, err := store.Summary("sp")
	if err != nil || sum.Status != checkpoint.StatusPaused || sum.Round != 1 {
		t.Fatalf("summary %+v %v, want paused at round 1", sum, err)
	}
	s2, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "sp"})
	if err != nil {
		t.Fatalf("a new session of the paused agent: %v", err)
	}
	defer s2.Close()
	if out, err := s2.Call(context.Background(), "write_file", write, nil); err != nil || out.Round != 2 {
		t.Fatalf("the new session's call: %+v %v, want round 2", out, err)
	}
}

// Regression: a session asked to pause while no call ran went on holding
// its agent until its next call came, which for an idle client could be
// never; it stops at once, as a run stops at its boundary.
func TestSessionPausedWhileIdleStops(t *testing.T) {
	eng, store := fileEngine(t)
	af, _ := sessionAgent(t, "")
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "si"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := json.RawMessage(`{"path":"a.txt","content":"hi"}`)
	if out, err := s.Call(context.Background(), "write_file", write, nil); err != nil || out.IsError {
		t.Fatalf("first call: %+v %v", out, err)
	}
	if err := eng.Pause(context.Background(), "si"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Paused():
	case <-time.After(30 * time.Second):
		t.Fatal("the idle session did not stop within 30 s of its pause")
	}
	sum, err := store.Summary("si")
	if err != nil || sum.Status != checkpoint.StatusPaused || sum.Round != 1 || sum.Locked {
		t.Fatalf("summary %+v %v, want paused at round 1 and let go", sum, err)
	}
	if _, err := s.Call(context.Background(), "write_file", write, nil); !errors.Is(err, ErrSessionPaused) {
		t.Fatalf("a call after the pause: %v, want ErrSessionPaused", err)
	}
}
