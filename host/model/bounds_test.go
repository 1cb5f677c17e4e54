package model

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// bigStream is a stream of a turn with n bytes of text, or of tool-call
// arguments, in pieces of 64 KiB.
func bigStream(provider string, n int, args bool) string {
	piece := strings.Repeat("x", 64<<10)
	var b strings.Builder
	if provider == "anthropic" {
		b.WriteString(anEv(anStart))
		if args {
			b.WriteString(anEv(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`))
		} else {
			b.WriteString(anEv(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		}
		for ; n > 0; n -= len(piece) {
			if args {
				b.WriteString(anEv(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"` + piece + `"}}`))
			} else {
				b.WriteString(anEv(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + piece + `"}}`))
			}
		}
		b.WriteString(anEv(`{"type":"content_block_stop","index":0}`) + anMessageDelta("end_turn") + anEv(anStop))
		return b.String()
	}
	for ; n > 0; n -= len(piece) {
		if args {
			b.WriteString(chunk(`{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"` + piece + `"}}]}`))
		} else {
			b.WriteString(chunk(`{"content":"` + piece + `"}`))
		}
	}
	b.WriteString(oaFinish("stop"))
	return b.String()
}

// A 100 MB answer used to be taken whole, the host swelling to 800 MB.
// A turn past 16 MiB of text and arguments now fails, once: the same
// request would bring the same answer.
func TestTurnTooLarge(t *testing.T) {
	for _, fl := range flavours {
		for _, args := range []bool{false, true} {
			t.Run(fl.name+map[bool]string{false: "/text", true: "/arguments"}[args], func(t *testing.T) {
				srv := serve(t, sse(events(bigStream(fl.name, maxTurn+(1<<20), args))...))
				p, rp := fl.open(srv.URL)
				fastRetries(rp, 2)
				resp, err := p.Complete(context.Background(), hello)
				if !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "longer than 16 MiB") {
					t.Fatalf("err %v, want ErrTooLarge naming 16 MiB", err)
				}
				if srv.requests() != 1 {
					t.Errorf("%d requests, want 1", srv.requests())
				}
				if resp.Message.Text != "" || len(resp.Message.ToolCalls) != 0 {
					t.Errorf("a turn too large was returned")
				}
			})
		}
	}
	// Just under the bound is a turn.
	srv := serve(t, sse(events(bigStream("openai", maxTurn-(64<<10), false))...))
	resp, err := NewOpenAI(Spec{Provider: "openai", BaseURL: srv.URL}).Complete(context.Background(), hello)
	if err != nil || len(resp.Message.Text) != maxTurn-(64<<10) {
		t.Errorf("a turn of %d bytes: %d bytes, %v", maxTurn-(64<<10), len(resp.Message.Text), err)
	}
}

// A line of a stream over 8 MiB used to be retried three times and then
// pause the run with "bufio.Scanner: token too long".
func TestSSELineTooLongNotRetried(t *testing.T) {
	for _, fl := range flavours {
		t.Run(fl.name, func(t *testing.T) {
			huge := strings.Repeat("y", maxSSELine+1)
			stream := chunk(`{"content":"` + huge + `"}`)
			if fl.name == "anthropic" {
				stream = anEv(anStart) + anEv(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+huge+`"}}`)
			}
			srv := serve(t, sse(events(stream)...))
			p, rp := fl.open(srv.URL)
			fastRetries(rp, 2)
			_, err := p.Complete(context.Background(), hello)
			if !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnavailable) ||
				!strings.Contains(err.Error(), "a line of the event stream is longer than 8 MiB") ||
				strings.Contains(err.Error(), "token too long") {
				t.Fatalf("err %v, want ErrTooLarge saying the line is longer than 8 MiB", err)
			}
			if srv.requests() != 1 {
				t.Errorf("%d requests, want 1", srv.requests())
			}
		})
	}
}
