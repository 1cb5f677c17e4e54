package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// fakeWire is a model on loopback that speaks OpenAI's or Anthropic's
// streaming API: a request with tools gets a read_file call (ids unique
// to the request), one without (a summary) gets text. It keeps the size of
// the largest request body and every status it answered.
type fakeWire struct {
	*httptest.Server
	mu       sync.Mutex
	n        int
	largest  int
	refusals []string
}

func wireServer(t *testing.T, provider string) *fakeWire {
	f := &fakeWire{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Tools    []json.RawMessage `json:"tools"`
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		f.mu.Lock()
		f.n++
		n := f.n
		f.largest = max(f.largest, len(body))
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 || req.Messages[0].Role != "user" && req.Messages[0].Role != "system" {
			f.refusals = append(f.refusals, fmt.Sprintf("request %d: %v %.200s", n, err, body))
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if provider == "openai" {
			io.WriteString(w, openAIStream(n, len(req.Tools) > 0))
		} else {
			io.WriteString(w, anthropicStream(n, len(req.Tools) > 0))
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func openAIStream(n int, call bool) string {
	chunk := `{"choices":[{"index":0,"delta":{"content":"The agent read notes.txt many times."},"finish_reason":"stop"}]}`
	if call {
		chunk = fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_w%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}]},"finish_reason":"tool_calls"}]}`, n)
	}
	return fmt.Sprintf("data: %s\n\ndata: %s\n\ndata: [DONE]\n\n", chunk,
		`{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`)
}

func anthropicStream(n int, call bool) string {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	s := ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":11,"output_tokens":1}}}`)
	stop := "end_turn"
	if call {
		stop = "tool_use"
		s += ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_w%d","name":"read_file","input":{}}}`, n))
		s += ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"notes.txt\"}"}}`)
	} else {
		s += ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		s += ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The agent read notes.txt many times."}}`)
	}
	s += ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	s += ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q},"usage":{"output_tokens":5}}`, stop))
	return s + ev("message_stop", `{"type":"message_stop"}`)
}

// Under both HTTP providers a context budget holds as it does under the
// script: every request within it, each accepted, its body bounded while
// the conversation grows, and the journal whole.
func TestContextBudgetOverHTTPProviders(t *testing.T) {
	const rounds = 150
	for _, provider := range []string{"openai", "anthropic"} {
		for name, section := range policies {
			t.Run(provider+"/"+name, func(t *testing.T) {
				srv := wireServer(t, provider)
				af := contextAgent(t, section, rounds)
				af.Model.Provider, af.Model.Name, af.Model.Script = provider, "test-model", ""
				af.Model.BaseURL, af.Model.MaxRetries = srv.URL, -1
				if provider == "openai" {
					af.Model.BaseURL += "/v1"
				}
				rec := &recorder{t: t, budget: budget}
				eng, store := recordingEngine(t, rec, nil)
				res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "wire", Prompt: contextPrompt})
				if err != nil || res.Rounds != rounds {
					t.Fatalf("run: %+v, %v", res, err)
				}
				if len(rec.over) > 0 || len(rec.bad) > 0 || len(rec.headless) > 0 || len(srv.refusals) > 0 {
					t.Fatalf("over the budget %v; parted %v; headless %v; refused by the server %v", rec.over, rec.bad, rec.headless, srv.refusals)
				}
				st := readState(t, store, "wire")
				if len(st.Messages) != 1+2*rounds || len(st.Compactions) == 0 {
					t.Fatalf("%d messages, %d cuts", len(st.Messages), len(st.Compactions))
				}
				// A request within 3,000 estimated tokens is at most 12,000
				// bytes of text; the JSON around it adds some per message.
				if srv.largest > 3*4*budget {
					t.Errorf("the largest request body is %d bytes", srv.largest)
				}
				t.Logf("%d requests, the largest %d bytes", srv.n, srv.largest)
			})
		}
	}
}
