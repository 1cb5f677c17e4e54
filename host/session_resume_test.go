package host

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// A session's agent left mid-round (its `cairn mcp` killed) is resumed by
// `cairn resume`: the round is sealed and committed, and the resume stops
// there, paused, saying that an MCP client goes on, since no model can
// take its turns. It once failed for want of the script its agent file
// names none of.
func TestResumeOfASessionAgentSealsAndStops(t *testing.T) {
	af, _ := sessionAgent(t, "")
	var once atomic.Bool
	eng, _ := watchedEngine(t, t.TempDir(), func(r checkpoint.Record) bool {
		return r.Type == checkpoint.RecCommit && r.Round == 2 && once.CompareAndSwap(false, true)
	})
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Call(context.Background(), "write_file", json.RawMessage(`{"path":"a.txt","content":"one"}`), nil); err != nil || out.IsError {
		t.Fatalf("first call: %+v %v", out, err)
	}
	if _, err := s.Call(context.Background(), "read_file", json.RawMessage(`{"path":"a.txt"}`), nil); err == nil {
		t.Fatal("the second call's round committed past its cut")
	}
	s.Close()
	res, events := resume(t, eng, "s", StrategySeal)
	if res.Status != StatusPaused || res.Rounds != 2 || !strings.Contains(res.Reason, "cairn mcp --id s") {
		t.Fatalf("resume: %+v", res)
	}
	if ar := eventOf(events, EventAgentResumed); ar == nil || len(ar.Finished)+len(ar.Sealed) != 1 {
		t.Fatalf("agent_resumed: %+v", ar)
	}
	if eventOf(events, EventModelTurn) != nil {
		t.Fatal("the resume asked a model")
	}
	res, _ = resume(t, eng, "s", StrategySeal)
	if res.Status != StatusPaused || res.Rounds != 2 {
		t.Fatalf("a second resume: %+v", res)
	}
}

// A later session of an agent with another agent file (a `cairn mcp
// --id` serving other tools) journals the new definition: the agent shows
// the file its calls ran with, and verify finds the module of each call.
// It once kept the first file, and verify reported the later calls as
// diverged.
func TestSessionWithOtherToolsRedefinesTheAgent(t *testing.T) {
	eng, _ := fileEngine(t)
	first, ws := sessionAgent(t, "")
	src := `name: sess
model: {provider: script}
workspace: ` + ws + `
tools: [{module: builtin, only: [write_file, read_file]}]
`
	narrow, err := ParseAgentFile([]byte(src), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	call := func(af *AgentFile, tool, input string) {
		t.Helper()
		s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if out, err := s.Call(context.Background(), tool, json.RawMessage(input), nil); err != nil || out.IsError {
			t.Fatalf("%s: %+v %v", tool, out, err)
		}
	}
	call(narrow, "write_file", `{"path":"a.txt","content":"one"}`)
	call(first, "append", `{"path":"a.txt","line":"two"}`)
	in, err := Inspect(context.Background(), eng.store, "r")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(in.AgentFile), "hostile") {
		t.Fatalf("the agent file shown is the first:\n%s", in.AgentFile)
	}
	rep, err := eng.Verify(context.Background(), "r", VerifyOptions{})
	if err != nil || rep.Diverged != 0 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}
