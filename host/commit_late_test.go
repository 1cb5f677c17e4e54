package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// A round's commit syncs while the next round begins, and the events that
// tell of it (checkpoint_saved, round_end, the tool_end of the call
// journaled with it) and every event after them wait until it is
// durable: the k-th checkpoint_saved is told only once k syncs of the
// journal have returned (each round here syncs its journal once, at its
// commit). The syncs' reports are slowed, so that an event told early
// would be told before its sync's report; every event still comes, once,
// in order.
func TestCommitEventsWaitForTheCommitToBeDurable(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: late
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
`, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.md}}]
  - tool_calls: [{name: read_file, input: {path: a.md}}]
  - tool_calls: [{name: read_file, input: {path: a.md}}]
  - text: done
`)
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "a.md"), []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var synced atomic.Int32
	stop := syncpoint.Observe(func(path string) {
		if strings.HasPrefix(filepath.Base(path), "journal-") {
			time.Sleep(10 * time.Millisecond)
			synced.Add(1)
		}
	})
	defer stop()
	var types, early []string
	saved := int32(0)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "late", Prompt: "go", OnEvent: func(e Event) {
		types = append(types, string(e.Type))
		if e.Type == EventCheckpointSaved {
			if saved++; synced.Load() < saved {
				early = append(early, fmt.Sprintf("round %d after %d syncs", e.Round, synced.Load()))
			}
		}
	}})
	if err != nil || res.Status != StatusDone || res.Rounds != 4 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if len(early) > 0 {
		t.Fatalf("checkpoint_saved told before its commit was durable: %v", early)
	}
	if got := strings.Count(strings.Join(types, " "), string(EventCheckpointSaved)); got != 4 {
		t.Fatalf("%d checkpoint_saved events, want 4: %v", got, types)
	}
	var turns []string
	for _, typ := range types {
		if typ == string(EventModelTurn) || typ == string(EventRoundEnd) {
			turns = append(turns, typ)
		}
	}
	if got, want := strings.Join(turns, " "), strings.Repeat("model_turn round_end ", 4); got+" " != want {
		t.Fatalf("the rounds' turns and ends came as %q, want %q", got, want)
	}
	if types[len(types)-1] != string(EventRunEnd) {
		t.Fatalf("the last event is %s, want run_end: %v", types[len(types)-1], types)
	}
}

// A request to a model server follows the last round's commit once it is
// durable: the server never sees a round that a power cut could still
// lose. The k-th request comes only once k-1 syncs of the journal have
// returned (each round here syncs its journal once, at its commit; its
// reads are effect-free), their reports slowed as above.
func TestModelServerRequestWaitsForTheLastCommit(t *testing.T) {
	var synced, requests atomic.Int32
	var early atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		n := requests.Add(1)
		if got := synced.Load(); got < n-1 && early.Load() == nil {
			early.Store(fmt.Sprintf("request %d after %d syncs", n, got))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if n > 3 {
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[`+
			`{"index":0,"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.md\"}"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n", n)
	}))
	t.Cleanup(srv.Close)
	eng, _ := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(`
name: remote
model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
`, srv.URL), "")
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "a.md"), []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := syncpoint.Observe(func(path string) {
		if strings.HasPrefix(filepath.Base(path), "journal-") {
			time.Sleep(10 * time.Millisecond)
			synced.Add(1)
		}
	})
	defer stop()
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "remote", Prompt: "go"})
	if err != nil || res.Status != StatusDone || res.Rounds != 4 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if e := early.Load(); e != nil {
		t.Fatalf("the model server had a request before the round before it was durable: %s", e)
	}
}

// A session's caller (an MCP client) learns a call's outcome once its
// round is durable: after the k-th call returns, k syncs of the journal
// have returned (each round here syncs once, at its commit; its read is
// effect-free), their reports slowed as above.
func TestSessionCallReturnsOnceItsRoundIsDurable(t *testing.T) {
	eng, _ := fileEngine(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ws", "a.md"), []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	af, err := ParseAgentFile([]byte("name: sess\nmodel: {provider: script}\nworkspace: ws\ntools: [{module: builtin, only: [read_file]}]\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := eng.OpenSession(context.Background(), SessionOptions{Agent: af, ID: "durable"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var synced atomic.Int32
	stop := syncpoint.Observe(func(path string) {
		if strings.HasPrefix(filepath.Base(path), "journal-") {
			time.Sleep(10 * time.Millisecond)
			synced.Add(1)
		}
	})
	defer stop()
	for k := int32(1); k <= 3; k++ {
		out, err := s.Call(context.Background(), "read_file", json.RawMessage(`{"path":"a.md"}`), nil)
		if err != nil || out.IsError {
			t.Fatalf("call %d: %+v %v", k, out, err)
		}
		if got := synced.Load(); got < k {
			t.Fatalf("call %d returned after %d syncs of the journal: its round was not durable yet", k, got)
		}
	}
}
