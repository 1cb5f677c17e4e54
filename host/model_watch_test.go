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
	"time"
)

// hangingOpenAI answers its first request with a call of list_dir, in
// OpenAI's streaming format, and holds every later one open, its headers
// sent and no chunk after, until the client goes away or hang is cleared;
// then it answers with text. arrived is signalled as each held request
// arrives.
func hangingOpenAI(t *testing.T) (srv *httptest.Server, arrived chan struct{}, hang *atomic.Bool) {
	arrived, hang = make(chan struct{}, 8), &atomic.Bool{}
	hang.Store(true)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if !strings.Contains(string(body), `"tool_call_id"`) {
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		if hang.Load() {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			arrived <- struct{}{}
			<-r.Context().Done()
			return
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, arrived, hang
}

const hangingAgent = `
name: hung
model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
%s
`

// Regression: a model server that sent its headers and then nothing held
// the run forever: `cairn pause` waited for a boundary the run never
// reached. A pause asked for while a request is in flight ends the
// request, and the run pauses at its last boundary; resume goes on.
func TestPauseEndsAModelRequestThatHangs(t *testing.T) {
	srv, arrived, hang := hangingOpenAI(t)
	eng, _ := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(hangingAgent, srv.URL, ""), "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		<-arrived
		if err := eng.Pause(ctx, "hung"); err != nil {
			t.Errorf("pause: %v", err)
		}
	}()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "hung", Prompt: "look"})
	if err != nil || res.Status != StatusPaused || res.Reason != pausedOnRequest || res.Rounds != 1 {
		t.Fatalf("run: %+v, %v; want paused on request after round 1", res, err)
	}
	hang.Store(false)
	res, err = eng.Resume(ctx, ResumeOptions{ID: "hung"})
	if err != nil || res.Status != StatusDone || res.Text != "done" || res.Rounds != 2 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
}

// Regression: a run's max_time did not end a model request that hung, so
// an agent with max_time: 1s still ran 20 s later. The request is ended
// when the time is up, and the run pauses at its boundary saying so.
func TestMaxTimeEndsAModelRequestThatHangs(t *testing.T) {
	srv, _, _ := hangingOpenAI(t)
	eng, _ := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(hangingAgent, srv.URL, "limits: {max_time: 1s}"), "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "hung", Prompt: "look"})
	if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "max_time") || res.Rounds != 1 {
		t.Fatalf("run: %+v, %v; want paused by max_time after round 1", res, err)
	}
}
