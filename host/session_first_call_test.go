package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a session made its new agent when it opened, so a session
// that took no call (a client that only listed the tools) left an agent
// in the store. With AtFirstCall the agent is made at the first call, its
// store untouched until then; without it, as before, at the open.
func TestSessionAtFirstCallMakesAgentAtItsFirstCall(t *testing.T) {
	eng, store := fileEngine(t)
	af, ws := sessionAgent(t, "")
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, AtFirstCall: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools()) == 0 {
		t.Fatal("the session offers no tools before its first call")
	}
	id := s.ID()
	if store.Exists(id) {
		t.Fatalf("agent %s made at the open", id)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if ids, err := store.List(); err != nil || len(ids) != 0 {
		t.Fatalf("a session without calls left %v (%v)", ids, err)
	}
	if _, err := os.Stat(filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", id)); !os.IsNotExist(err) {
		t.Errorf("a session without calls left its agent's directory: %v", err)
	}

	s, err = eng.OpenSession(context.Background(), SessionOptions{Agent: af, AtFirstCall: true})
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
	if _, err := s.Call(context.Background(), "read_file", json.RawMessage(`{"path":"a.txt"}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rec, log, err := store.Open(s.ID())
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	if rec.State.Round != 2 || rec.State.Status != checkpoint.StatusDone || rec.State.Definition.AgentFile == "" {
		t.Errorf("the agent made at the first call: round %d, status %s, agent file %q; want round 2, done, its agent file kept",
			rec.State.Round, rec.State.Status, rec.State.Definition.AgentFile)
	}
}
