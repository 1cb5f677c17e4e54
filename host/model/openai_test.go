package model

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

func TestOpenAIRecordedToolCalls(t *testing.T) {
	t.Setenv("TEST_OPENAI_KEY", "sk-test")
	srv := serve(t, sse(events(recording(t, "openai_tools.sse"))...))
	p := NewOpenAI(Spec{Provider: "openai", Name: "gpt-4o-mini", BaseURL: srv.URL + "/v1/", APIKeyEnv: "TEST_OPENAI_KEY",
		Price: &Price{Input: 0.15, Output: 0.60}})
	req := hello
	req.Model = "ignored-for-the-spec-name"
	req.System = "be brief"
	req.Tools = []Tool{{Name: "read_file", Description: "reads", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantTools(t, resp)
	ids := []string{resp.Message.ToolCalls[0].ID, resp.Message.ToolCalls[1].ID}
	if ids[0] != "call_pXq3T9mJ4kYbR2vW8nLs0dHe" || ids[1] != "call_Vb7cN1eGz5uQ6wKa3yTf9oMi" {
		t.Errorf("ids %v", ids)
	}
	// 412 in at 0.15 and 47 out at 0.60 per million: 61.8 + 28.2 µ$.
	if want := (conversation.Usage{InputTokens: 412, OutputTokens: 47, CostMicroUSD: 90}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	if got := srv.headers[0].Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization %q", got)
	}
	if srv.paths[0] != "/v1/chat/completions" {
		t.Errorf("path %q", srv.paths[0])
	}
	var body map[string]any
	if err := json.Unmarshal(srv.body(0), &body); err != nil {
		t.Fatal(err)
	}
	if body["model"] != "gpt-4o-mini" || body["stream"] != true ||
		!reflect.DeepEqual(body["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("request %s", srv.body(0))
	}
	msgs := body["messages"].([]any)
	if first := msgs[0].(map[string]any); first["role"] != "system" || first["content"] != "be brief" {
		t.Errorf("first message %v", first)
	}
	tool := body["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if tool["name"] != "read_file" || tool["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("tool %v", tool)
	}
}

func TestOpenAIRecordedText(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	srv := serve(t, sse(events(recording(t, "openai_text.sse"))...))
	p := NewOpenAI(Spec{Provider: "openai", BaseURL: srv.URL})
	var streamed strings.Builder
	req := hello
	req.Model = "llama3.2"
	req.OnText = func(s string) { streamed.WriteString(s) }
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "I wrote the report to REPORT.md." || streamed.String() != resp.Message.Text {
		t.Errorf("text %q, streamed %q", resp.Message.Text, streamed.String())
	}
	if want := (conversation.Usage{InputTokens: 2048, OutputTokens: 9, CacheReadTokens: 1024}); resp.Usage != want || resp.StopReason != "end_turn" {
		t.Errorf("usage %+v stop %q", resp.Usage, resp.StopReason)
	}
	if h := srv.headers[0].Get("Authorization"); h != "" {
		t.Errorf("sent Authorization %q with no key", h)
	}
	if !strings.Contains(string(srv.body(0)), `"model":"llama3.2"`) {
		t.Errorf("the request's model was not used without a spec name: %s", srv.body(0))
	}
}

// chunk is a streamed chunk whose delta is d.
func chunk(d string) string {
	return `data: {"choices":[{"index":0,"delta":` + d + `,"finish_reason":null}]}` + "\n\n"
}

const finish = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n"

func TestOpenAIDecode(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		calls  []string // name and input of each call
		err    error
	}{
		{"arguments split mid-token", chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"k\":"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":" 1}"}}]}`) + finish + "data: [DONE]\n\n",
			[]string{`f {"k": 1}`}, nil},
		{"interleaved indexes", chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}`) +
			chunk(`{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"[1"}}]}`) +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"}"}},{"index":1,"function":{"arguments":"]"}}]}`) +
			finish + "data: [DONE]\n\n",
			[]string{"f {}", "g [1]"}, nil},
		{"malformed arguments kept as written", chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"path\": "}}]}`) +
			finish + "data: [DONE]\n\n",
			[]string{`f {"path": `}, nil},
		{"no index, whole calls (older Ollama)", chunk(`{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}`) +
			chunk(`{"tool_calls":[{"function":{"name":"g","arguments":"{\"x\":2}"}}]}`) + finish + "data: [DONE]\n\n",
			[]string{"f {}", `g {"x":2}`}, nil},
		{"no [DONE] after the finish reason", chunk(`{"content":"hi"}`) + finish, nil, nil},
		{"cut before the finish reason", chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}`), nil, errStreamCut},
		{"cut inside an event", chunk(`{"content":"hi"}`) + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, nil, errStreamCut},
		{"[DONE] before any choice", "data: [DONE]\n\n", nil, errNoChoice},
		{"[DONE] after usage alone", `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0}}` + "\n\ndata: [DONE]\n\n", nil, errNoChoice},
		{"refused in the stream", `data: {"error":{"type":"invalid_request_error","message":"context too long"}}` + "\n\n", nil, ErrRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := decodeOpenAIStream(strings.NewReader(tt.stream), nil)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			var got []string
			for _, c := range resp.Message.ToolCalls {
				got = append(got, c.Name+" "+c.Input)
				if c.ID == "" {
					t.Errorf("call %s has no id", c.Name)
				}
			}
			if !reflect.DeepEqual(got, tt.calls) {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
		})
	}
}

func TestOpenAIMadeUpIDsDiffer(t *testing.T) {
	s := chunk(`{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}`) +
		chunk(`{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}`) + finish
	a, _ := decodeOpenAIStream(strings.NewReader(s), nil)
	b, _ := decodeOpenAIStream(strings.NewReader(s), nil)
	ids := map[string]bool{}
	for _, r := range []Response{a, b} {
		for _, c := range r.Message.ToolCalls {
			ids[c.ID] = true
		}
	}
	if len(ids) != 4 {
		t.Errorf("made-up ids repeat: %v", ids)
	}
}

func TestOpenAIHistory(t *testing.T) {
	msgs := openAIMessages("", Normalize(history()))
	b, _ := json.Marshal(msgs)
	want := `[{"role":"user","content":"tidy up"},` +
		`{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"write_file","arguments":"{\"_raw_arguments\":\"{\\\"path\\\": \"}"}},` +
		`{"id":"toolu_3","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},` +
		`{"role":"tool","content":"contents of a","tool_call_id":"call_1"},` +
		`{"role":"tool","content":"error: arguments are not valid JSON","tool_call_id":"call_2"},` +
		`{"role":"tool","content":"` + NotRunResult + `","tool_call_id":"toolu_3"},` +
		`{"role":"assistant","content":"done"}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// history has a call with bad JSON, a call that never ran, and an orphan
// result, as a sealed or switched run may. Each call makes a new one.
func history() []conversation.Message {
	return []conversation.Message{
		{Role: conversation.RoleUser, Text: "tidy up"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{
			{ID: "call_1", Name: "read_file", Input: `{"path":"a"}`},
			{ID: "call_2", Name: "write_file", Input: `{"path": `},
			{ID: "toolu_3", Name: "list_dir", Input: ``},
		}},
		{Role: conversation.RoleTool, CallID: "call_2", ToolName: "write_file", Text: "arguments are not valid JSON", IsError: true},
		{Role: conversation.RoleTool, CallID: "call_1", ToolName: "read_file", Text: "contents of a"},
		{Role: conversation.RoleTool, CallID: "call_9", ToolName: "gone", Text: "orphan"},
		{Role: conversation.RoleAssistant, Text: "done"},
	}
}

// Regression: a server whose stream was `data: [DONE]` alone, with no
// choice, was taken as an empty turn, which ends the agent's task as if
// the model had nothing to say. It is asked again, as a cut stream is,
// and a server that keeps at it makes the model unavailable, saying why;
// one that answers the next time gives its turn.
func TestOpenAIStreamWithNoChoiceIsAskedAgain(t *testing.T) {
	empty := sse("data: [DONE]\n\n")
	srv := serve(t, empty, sse(events(recording(t, "openai_tools.sse"))...))
	p := NewOpenAI(Spec{Provider: "openai", Name: "gpt-4o-mini", BaseURL: srv.URL})
	fastRetries(&p.retry, 2)
	resp, err := p.Complete(context.Background(), hello)
	if err != nil {
		t.Fatalf("a server that answers the second time: %v", err)
	}
	wantTools(t, resp)

	srv = serve(t, empty)
	p = NewOpenAI(Spec{Provider: "openai", Name: "gpt-4o-mini", BaseURL: srv.URL})
	fastRetries(&p.retry, 2)
	_, err = p.Complete(context.Background(), hello)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "before any choice: the server sent no answer") {
		t.Fatalf("err %v, want ErrUnavailable saying the server sent no answer", err)
	}
}
