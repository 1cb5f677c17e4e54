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

// fakeOpenAI speaks OpenAI's streaming chat completions on loopback: the
// first answer asks for list_dir, every later one is text. While down is
// set it answers 500.
type fakeOpenAI struct {
	*httptest.Server
	down     atomic.Bool
	requests atomic.Int32
	last     atomic.Value // the last request's body
}

func openAIServer(t *testing.T) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.requests.Add(1)
		f.last.Store(string(body))
		if f.down.Load() {
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
	t.Cleanup(f.Close)
	return f
}

// A real HTTP model that fails pauses the run at its boundary, with the
// error; when the server is back, resume continues the conversation.
func TestModelOutagePausesAndResumes(t *testing.T) {
	srv := openAIServer(t)
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
			srv.down.Store(true)
			paused = true
		}
	}})
	if err != nil || !paused || res.Status != StatusPaused || !strings.Contains(res.Reason, "the server is down") {
		t.Fatalf("run: %+v, %v; want paused after round 1 with the server's error", res, err)
	}
	if strings.Count(res.Reason, "unavailable") != 1 || strings.Contains(res.Reason, "model: model") {
		t.Errorf("the reason repeats its context: %q", res.Reason)
	}
	srv.down.Store(false)
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
	if n := srv.requests.Load(); n != 3 {
		t.Fatalf("%d requests, want 3: one per turn and the one that failed", n)
	}
}
