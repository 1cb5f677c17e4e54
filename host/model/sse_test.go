package model

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func readAll(s string) ([]sseEvent, error) {
	r := newSSEReader(strings.NewReader(s))
	var out []sseEvent
	for {
		ev, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSE(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{"plain", "data: a\n\ndata: b\n\n", []sseEvent{{Data: []byte("a")}, {Data: []byte("b")}}},
		{"named", "event: ping\ndata: {}\n\n", []sseEvent{{Name: "ping", Data: []byte("{}")}}},
		{"CRLF", "event: e\r\ndata: x\r\n\r\n", []sseEvent{{Name: "e", Data: []byte("x")}}},
		{"several data lines", "data: a\ndata:b\n\n", []sseEvent{{Data: []byte("a\nb")}}},
		{"comments and unknown fields", ": keep-alive\nid: 7\nretry: 10\ndata: x\n\n", []sseEvent{{Data: []byte("x")}}},
		{"no data is no event", "event: e\n\n\n\ndata: x\n\n", []sseEvent{{Data: []byte("x")}}},
		{"value with colons", "data: a: b\n\n", []sseEvent{{Data: []byte("a: b")}}},
		{"an event cut off is dropped", "data: a\n\ndata: b\n", []sseEvent{{Data: []byte("a")}}},
	}
	for _, tt := range tests {
		got, err := readAll(tt.in)
		if !errors.Is(err, io.EOF) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestSSELineTooLong(t *testing.T) {
	_, err := readAll("data: " + strings.Repeat("x", maxSSELine+1) + "\n\n")
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("err %v, want a line-too-long error", err)
	}
}

func FuzzSSE(f *testing.F) {
	f.Add("data: a\n\n")
	f.Add("event: e\r\ndata: x\r\ndata: y\r\n\r\n: c\n")
	f.Add(recording(f, "anthropic_tools.sse"))
	f.Fuzz(func(t *testing.T, s string) {
		evs, err := readAll(s)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("error %v from a string reader", err)
		}
		if len(evs) > strings.Count(s, "\n")+1 {
			t.Fatalf("%d events from %d lines", len(evs), strings.Count(s, "\n"))
		}
	})
}

func FuzzOpenAIStream(f *testing.F) {
	f.Add(recording(f, "openai_tools.sse"))
	f.Add(recording(f, "openai_text.sse"))
	f.Add(chunk(`{"tool_calls":[{"function":{"name":"f","arguments":"{"}}]}`) + finish)
	f.Fuzz(func(t *testing.T, s string) {
		resp, err := decodeOpenAIStream(strings.NewReader(s), func(string) {})
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

func FuzzAnthropicStream(f *testing.F) {
	f.Add(recording(f, "anthropic_tools.sse"))
	f.Add(recording(f, "anthropic_text.sse"))
	f.Add(anEv(`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{"}}`) + anEv(anStop))
	f.Fuzz(func(t *testing.T, s string) {
		resp, err := decodeAnthropicStream(strings.NewReader(s), func(string) {})
		if err != nil {
			return
		}
		if resp.Usage.InputTokens < resp.Usage.CacheReadTokens+resp.Usage.CacheWriteTokens {
			t.Fatalf("usage %+v counts fewer inputs than cache tokens", resp.Usage)
		}
	})
}
