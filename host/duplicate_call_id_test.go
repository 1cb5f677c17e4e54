package host

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: a model that gave two calls of one turn the same id had
// the second call's result journaled over the first's: `cairn log` showed
// list_dir's answer for read_file, and the next request sent it twice.
// Each call of a turn gets an id of its own, and its own result.
func TestDuplicateCallIDsInATurnKeepEachResult(t *testing.T) {
	var second atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.Contains(string(body), `"tool_call_id"`) {
			second.Store(string(body))
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[`+
			`{"index":0,"id":"call_0","type":"function","function":{"name":"list_dir","arguments":"{}"}},`+
			`{"index":1,"id":"call_0","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"todo.txt\"}"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	eng, store := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(`
name: dup
model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1}
workspace: workspace
tools: [{module: builtin, only: [list_dir, read_file]}]
`, srv.URL), "")
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "todo.txt"), []byte("buy milk"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "dup", Prompt: "look"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	rec, err := store.Read("dup")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	var turn *conversation.Message
	for i, m := range rec.State.Messages {
		switch {
		case m.Role == conversation.RoleAssistant && len(m.ToolCalls) > 0:
			turn = &rec.State.Messages[i]
		case m.Role == conversation.RoleTool:
			byID[m.CallID] = m.Text
		}
	}
	if turn == nil || len(turn.ToolCalls) != 2 || turn.ToolCalls[0].ID == turn.ToolCalls[1].ID {
		t.Fatalf("the turn's calls: %+v", turn)
	}
	list, read := byID[turn.ToolCalls[0].ID], byID[turn.ToolCalls[1].ID]
	if !strings.Contains(list, "todo.txt") || !strings.Contains(read, "buy milk") {
		t.Fatalf("results: list_dir %q, read_file %q", list, read)
	}
	if body, _ := second.Load().(string); !strings.Contains(body, "buy milk") || strings.Count(body, `"tool_call_id"`) != 2 {
		t.Fatalf("the next request does not carry both results:\n%s", body)
	}
}
