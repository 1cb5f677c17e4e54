package model

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// whole answers 200 with a complete JSON document, as a server that
// ignores "stream": true does.
func whole(body string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = io.WriteString(w, body)
	}
}

// A server that ignored "stream": true and answered with the whole turn as
// JSON was taken for a stream that ended before the turn did, and retried
// three times. Its answer is now read, whichever the provider.
func TestNonStreamedJSONAnswer(t *testing.T) {
	tests := []struct {
		name, provider, body string
		text, stop           string
		calls                []string
		usage                conversation.Usage
	}{
		{"openai text", "openai", `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"All done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105}}`,
			"All done.", StopEndTurn, nil, conversation.Usage{InputTokens: 100, OutputTokens: 5}},
		{"openai tool calls", "openai", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
			`{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"notes.md\"}"}},` +
			`{"id":"call_2","type":"function","function":{"name":"list_dir","arguments":"{\"path\": \".\"}"}}]},"finish_reason":"tool_calls"}]}`,
			"", StopToolUse, []string{`read_file {"path": "notes.md"}`, `list_dir {"path": "."}`}, conversation.Usage{}},
		{"openai refusal", "openai", `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
			"I can't help with that.", StopRefusal, nil, conversation.Usage{}},
		{"anthropic text", "anthropic", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-fake","content":[{"type":"text","text":"All done."}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":5}}`,
			"All done.", StopEndTurn, nil, conversation.Usage{InputTokens: 100, OutputTokens: 5}},
		{"anthropic tool calls", "anthropic", `{"type":"message","role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Let me look."},` +
			`{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"notes.md"}},{"type":"tool_use","id":"toolu_2","name":"list_dir","input":{}}],` +
			`"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":7}}`,
			"Let me look.", StopToolUse, []string{`read_file {"path":"notes.md"}`, "list_dir {}"},
			conversation.Usage{InputTokens: 100, OutputTokens: 7, CacheReadTokens: 90}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, whole(tt.body))
			p, err := Open(Spec{Provider: tt.provider, Name: "m", BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			fastRetries(&endpointOf(p).retry, 2)
			var streamed strings.Builder
			req := hello
			req.OnText = func(s string) { streamed.WriteString(s) }
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, c := range resp.Message.ToolCalls {
				calls = append(calls, c.Name+" "+c.Input)
				if c.ID == "" {
					t.Errorf("call %s has no id", c.Name)
				}
			}
			if resp.Message.Text != tt.text || streamed.String() != tt.text || resp.StopReason != tt.stop ||
				!reflect.DeepEqual(calls, tt.calls) || resp.Usage != tt.usage {
				t.Errorf("text %q streamed %q stop %q calls %q usage %+v; want %q %q %q %+v", resp.Message.Text, streamed.String(),
					resp.StopReason, calls, resp.Usage, tt.text, tt.stop, tt.calls, tt.usage)
			}
			if srv.requests() != 1 {
				t.Errorf("%d requests, want 1", srv.requests())
			}
		})
	}
}

// A JSON answer that is an error, or no answer at all, is reported as such.
func TestNonStreamedJSONErrors(t *testing.T) {
	for _, fl := range flavours {
		tests := []struct {
			name, body string
			is         error
			says       string
		}{
			{"an error", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`, ErrRequest, "prompt is too long"},
			{"not an answer", `{"hello":"world"}`, ErrUnavailable, `{"hello":"world"}`},
			{"not JSON", `<html>`, ErrUnavailable, "<html>"},
			{"too large", strings.Repeat(" ", maxWholeAnswer+1) + "{}", ErrTooLarge, "longer than 32 MiB"},
			{"a turn too large", map[string]string{
				"openai":    `{"choices":[{"message":{"content":"` + strings.Repeat("x", maxTurn+1) + `"}}]}`,
				"anthropic": `{"type":"message","content":[{"type":"text","text":"` + strings.Repeat("x", maxTurn+1) + `"}]}`,
			}[fl.name], ErrTooLarge, "longer than 16 MiB"},
		}
		for _, tt := range tests {
			t.Run(fl.name+"/"+tt.name, func(t *testing.T) {
				srv := serve(t, whole(tt.body))
				p, rp := fl.open(srv.URL)
				fastRetries(rp, 1)
				_, err := p.Complete(context.Background(), hello)
				if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.says) || strings.Contains(err.Error(), "ended before") {
					t.Fatalf("err %v, want %v saying %q", err, tt.is, tt.says)
				}
			})
		}
	}
}

func FuzzOpenAIJSON(f *testing.F) {
	f.Add(`{"choices":[{"index":0,"message":{"role":"assistant","content":"All done."},"finish_reason":"stop"}]}`)
	f.Add(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"{"}},{"function":{"name":"f"}}]}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		resp, err := decodeOpenAIJSON(strings.NewReader(s), func(string) {})
		if err != nil {
			return
		}
		for _, c := range resp.Message.ToolCalls {
			if c.ID == "" {
				t.Fatalf("call without id: %+v", c)
			}
		}
	})
}

func FuzzAnthropicJSON(f *testing.F) {
	f.Add(`{"type":"message","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"f","input":{}}],"stop_reason":"tool_use"}`)
	f.Add(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		resp, err := decodeAnthropicJSON(strings.NewReader(s), func(string) {})
		if err != nil {
			return
		}
		if resp.Usage.InputTokens < resp.Usage.CacheReadTokens+resp.Usage.CacheWriteTokens {
			t.Fatalf("usage %+v counts fewer inputs than cache tokens", resp.Usage)
		}
	})
}
