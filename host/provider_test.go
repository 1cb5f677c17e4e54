package host

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// openAIServer speaks OpenAI's streaming chat completions on loopback: the
// first answer asks for list_dir, every later one is text. While down is
// set it answers 500.
func openAIServer(t *testing.T, down *atomic.Bool, requests *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		requests.Add(1)
		if down.Load() {
			http.Error(w, `{"error":{"message":"the server is down"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
		if strings.Contains(string(body), `"tool_call_id"`) {
			chunk = `{"choices":[{"index":0,"delta":{"content":"The workspace is empty."},"finish_reason":"stop"}]}`
		}
		fmt.Fprintf(w, "data: %s\n\n", chunk)
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", `{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A real HTTP model that fails pauses the run at its boundary, with the
// error; when the server is back, resume continues the conversation.
func TestModelOutagePausesAndResumes(t *testing.T) {
	var down atomic.Bool
	var requests atomic.Int32
	srv := openAIServer(t, &down, &requests)
	agent := fmt.Sprintf(`
name: remote
model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1, price: {input: 1, output: 2}}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
`, srv.URL)
	eng, store := fileEngine(t)
	af := agentIn(t, agent, "")
	var paused bool
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "remote", Prompt: "look", OnEvent: func(e Event) {
		if e.Type == EventRoundEnd && e.Round == 1 {
			down.Store(true)
			paused = true
		}
	}})
	if err != nil || !paused || res.Status != StatusPaused || !strings.Contains(res.Reason, "the server is down") {
		t.Fatalf("run: %+v, %v; want paused after round 1 with the server's error", res, err)
	}
	down.Store(false)
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "remote"})
	if err != nil || res.Status != StatusDone || res.Text != "The workspace is empty." || res.Rounds != 2 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	rec, err := store.Read("remote")
	if err != nil {
		t.Fatal(err)
	}
	u := rec.State.Usage
	if u.InputTokens != 22 || u.OutputTokens != 10 || u.CostMicroUSD != 22*1+10*2 {
		t.Fatalf("usage %+v: want two turns of 11 in and 5 out, priced", u)
	}
	if n := requests.Load(); n != 3 {
		t.Fatalf("%d requests, want 3: one per turn and the one that failed", n)
	}
}
