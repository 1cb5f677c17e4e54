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

func TestAnthropicRecordedToolCalls(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	srv := serve(t, sse(events(recording(t, "anthropic_tools.sse"))...))
	p := NewAnthropic(Spec{Provider: "anthropic", Name: "claude-sonnet-4-5", BaseURL: srv.URL})
	var streamed strings.Builder
	req := hello
	req.System = "be brief"
	req.OnText = func(s string) { streamed.WriteString(s) }
	req.Tools = []Tool{{Name: "list_dir"}}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantTools(t, resp)
	if resp.Message.Text != "Let me look at the notes first." || streamed.String() != resp.Message.Text {
		t.Errorf("text %q streamed %q", resp.Message.Text, streamed.String())
	}
	if resp.Message.ToolCalls[0].ID != "toolu_01T1x1fJ34qAmk2tNTrN7Up6" {
		t.Errorf("id %q", resp.Message.ToolCalls[0].ID)
	}
	if want := (conversation.Usage{InputTokens: 472, OutputTokens: 96}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	if srv.paths[0] != "/v1/messages" {
		t.Errorf("path %q", srv.paths[0])
	}
	h := srv.headers[0]
	if h.Get("X-Api-Key") != "sk-ant-test" || h.Get("Anthropic-Version") != anthropicVersion {
		t.Errorf("headers %v", h)
	}
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Stream    bool   `json:"stream"`
		Tools     []anTool
	}
	if err := json.Unmarshal(srv.body(0), &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "claude-sonnet-4-5" || body.MaxTokens != defaultAnthropicLimit || body.System != "be brief" ||
		!body.Stream || len(body.Tools) != 1 || string(body.Tools[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("request %s", srv.body(0))
	}
}

func TestAnthropicRecordedCacheUsage(t *testing.T) {
	srv := serve(t, sse(events(recording(t, "anthropic_text.sse"))...))
	price := &Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	p := NewAnthropic(Spec{Provider: "anthropic", Name: "claude-sonnet-4-5", BaseURL: srv.URL, MaxTokens: 1000, Price: price})
	resp, err := p.Complete(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	// 12·3 + 2000·0.30 + 300·3.75 + 11·15 = 36 + 600 + 1125 + 165 µ$.
	want := conversation.Usage{InputTokens: 2312, OutputTokens: 11, CacheReadTokens: 2000, CacheWriteTokens: 300, CostMicroUSD: 1926}
	if resp.Usage != want || resp.StopReason != "end_turn" || resp.Message.Text != "I wrote the report to REPORT.md." {
		t.Errorf("usage %+v stop %q text %q", resp.Usage, resp.StopReason, resp.Message.Text)
	}
	if !strings.Contains(string(srv.body(0)), `"max_tokens":1000`) {
		t.Errorf("spec max_tokens not sent: %s", srv.body(0))
	}
}

func anEv(data string) string { return "event: x\ndata: " + data + "\n\n" }

const anStart = `{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`
const anStop = `{"type":"message_stop"}`

func TestAnthropicDecode(t *testing.T) {
	toolStart := anEv(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`)
	tests := []struct {
		name   string
		stream string
		calls  []string
		err    error
	}{
		{"malformed input kept as written", anEv(anStart) + toolStart +
			anEv(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}`) +
			anEv(`{"type":"content_block_stop","index":0}`) + anEv(anStop), []string{`f {"path": `}, nil},
		{"a tool without input", anEv(anStart) + toolStart + anEv(`{"type":"content_block_stop","index":0}`) + anEv(anStop),
			[]string{"f {}"}, nil},
		{"thinking skipped", anEv(anStart) +
			anEv(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`) +
			anEv(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`) +
			anEv(`{"type":"content_block_stop","index":0}`) + anEv(anStop), nil, nil},
		{"cut before message_stop", anEv(anStart) + toolStart + anEv(`{"type":"content_block_stop","index":0}`), nil, errStreamCut},
		{"overloaded in the stream", anEv(anStart) + anEv(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			nil, &retryableError{}},
		{"refused in the stream", anEv(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`),
			nil, ErrRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := decodeAnthropicStream(strings.NewReader(tt.stream), nil)
			var re *retryableError
			switch {
			case tt.err == nil && err != nil, tt.err != nil && err == nil:
				t.Fatalf("err %v, want %v", err, tt.err)
			case errors.As(tt.err, &re) && !errors.As(err, &re):
				t.Fatalf("err %v is not retryable", err)
			case !errors.As(tt.err, &re) && !errors.Is(err, tt.err):
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			var got []string
			for _, c := range resp.Message.ToolCalls {
				got = append(got, c.Name+" "+c.Input)
			}
			if !reflect.DeepEqual(got, tt.calls) {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
		})
	}
}

func TestAnthropicHistory(t *testing.T) {
	msgs := append(history(), conversation.Message{Role: conversation.RoleUser, Text: "and now?"})
	msgs[1].ToolCalls[0].ID = "call.1:x" // made by another provider
	msgs[3].CallID = "call.1:x"
	b, _ := json.Marshal(anthropicMessages(Normalize(msgs)))
	want := `[{"role":"user","content":[{"type":"text","text":"tidy up"}]},` +
		`{"role":"assistant","content":[` +
		`{"type":"tool_use","id":"call_1_x","name":"read_file","input":{"path":"a"}},` +
		`{"type":"tool_use","id":"call_2","name":"write_file","input":{"_raw_arguments":"{\"path\": "}},` +
		`{"type":"tool_use","id":"toolu_3","name":"list_dir","input":{}}]},` +
		`{"role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"call_1_x","content":"contents of a"},` +
		`{"type":"tool_result","tool_use_id":"call_2","content":"arguments are not valid JSON","is_error":true},` +
		`{"type":"tool_result","tool_use_id":"toolu_3","content":"` + NotRunResult + `","is_error":true}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"done"}]},` +
		`{"role":"user","content":[{"type":"text","text":"and now?"}]}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
