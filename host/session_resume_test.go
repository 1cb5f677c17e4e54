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
