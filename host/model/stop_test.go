package model

import (
	"context"
	"strings"
	"testing"
)

func oaFinish(reason string) string {
	return `data: {"choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}` + "\n\ndata: [DONE]\n\n"
}

func anMessageDelta(reason string) string {
	return anEv(`{"type":"message_delta","delta":{"stop_reason":"` + reason + `"},"usage":{"output_tokens":20}}`)
}

// A refusal used to end the run with no text at all (OpenAI's
// delta.refusal was dropped), and a turn cut off by its bound was called
// "max_tokens" by one provider and passed on as the other's name by the
// other. Every provider now names both the same, a cut tool call included.
func TestStopReasonsRefusalAndLength(t *testing.T) {
	const sorry = "I'm sorry, I can't help with that request."
	anText := anEv(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		anEv(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The notes say that the"}}`) +
		anEv(`{"type":"content_block_stop","index":0}`)
	anCutCall := anEv(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"write_file","input":{}}}`) +
		anEv(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"out.txt\",\"content\":\"abc"}}`) +
		anEv(`{"type":"content_block_stop","index":0}`)
	tests := []struct {
		name, provider, stream string
		stop, text, call       string
	}{
		{"openai refusal", "openai", chunk(`{"role":"assistant","content":""}`) + chunk(`{"refusal":"`+sorry+`"}`) + oaFinish("stop"),
			StopRefusal, sorry, ""},
		{"openai content filter", "openai", chunk(`{"content":"Here"}`) + oaFinish("content_filter"), StopRefusal, "Here", ""},
		{"openai length", "openai", chunk(`{"content":"The notes say that the"}`) + oaFinish("length"),
			StopLength, "The notes say that the", ""},
		{"openai length in a tool call", "openai",
			chunk(`{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"write_file","arguments":"{\"path\":\"out.txt\",\"content\":\"abc"}}]}`) +
				oaFinish("length"), StopLength, "", `write_file {"path":"out.txt","content":"abc`},
		{"anthropic refusal", "anthropic", anEv(anStart) + anMessageDelta("refusal") + anEv(anStop), StopRefusal, "", ""},
		{"anthropic max_tokens", "anthropic", anEv(anStart) + anText + anMessageDelta("max_tokens") + anEv(anStop),
			StopLength, "The notes say that the", ""},
		{"anthropic max_tokens in a tool call", "anthropic", anEv(anStart) + anCutCall + anMessageDelta("max_tokens") + anEv(anStop),
			StopLength, "", `write_file {"path":"out.txt","content":"abc`},
		{"anthropic end_turn", "anthropic", anEv(anStart) + anText + anMessageDelta("end_turn") + anEv(anStop),
			StopEndTurn, "The notes say that the", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, sse(events(tt.stream)...))
			p, err := Open(Spec{Provider: tt.provider, Name: "m", BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			req := hello
			req.OnText = func(s string) { streamed.WriteString(s) }
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var call string
			for _, c := range resp.Message.ToolCalls {
				call = c.Name + " " + c.Input
			}
			if resp.StopReason != tt.stop || resp.Message.Text != tt.text || streamed.String() != tt.text || call != tt.call {
				t.Errorf("stop %q text %q streamed %q call %q; want %q %q %q", resp.StopReason, resp.Message.Text,
					streamed.String(), call, tt.stop, tt.text, tt.call)
			}
		})
	}
	s, err := ParseScript([]byte("turns:\n  - tool_calls: [{name: f, input: {}}]\n  - text: done\n"))
	if err != nil {
		t.Fatal(err)
	}
	req := hello
	for _, want := range []string{StopToolUse, StopEndTurn} {
		resp, err := s.Complete(context.Background(), req)
		if err != nil || resp.StopReason != want {
			t.Fatalf("script: stop %q, %v; want %q", resp.StopReason, err, want)
		}
		req.Messages = append(req.Messages, resp.Message)
	}
}
