package model

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// flavour is one network provider as the failure tests see it.
type flavour struct {
	name    string
	tools   string // a recording of a turn with two tool calls
	errBody string
	open    func(url string) (Provider, *retryPolicy)
}

var flavours = []flavour{
	{name: "openai", tools: "openai_tools.sse",
		errBody: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
		open: func(url string) (Provider, *retryPolicy) {
			p := NewOpenAI(Spec{Provider: "openai", Name: "gpt-4o-mini", BaseURL: url})
			return p, &p.retry
		}},
	{name: "anthropic", tools: "anthropic_tools.sse",
		errBody: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
		open: func(url string) (Provider, *retryPolicy) {
			p := NewAnthropic(Spec{Provider: "anthropic", Name: "claude-sonnet-4-5", BaseURL: url})
			return p, &p.retry
		}},
}

var hello = Request{Messages: []conversation.Message{{Role: conversation.RoleUser, Text: "hello"}}}

// wantTools checks the turn of the tools recordings, whole.
func wantTools(t *testing.T, resp Response) {
	t.Helper()
	var got []string
	for _, c := range resp.Message.ToolCalls {
		got = append(got, c.Name+" "+c.Input)
	}
	want := []string{`read_file {"path": "notes.md"}`, `list_dir {"path": "."}`}
	if !reflect.DeepEqual(got, want) || resp.StopReason != "tool_use" {
		t.Fatalf("calls %q stop %q, want %q tool_use", got, resp.StopReason, want)
	}
}

func TestRetries(t *testing.T) {
	for _, fl := range flavours {
		ok := sse(events(recording(t, fl.tools))...)
		stream := recording(t, fl.tools)
		tests := []struct {
			name     string
			steps    []step
			waits    []time.Duration // nil: any backoff, one per retry
			requests int
		}{
			{"429 with Retry-After in seconds", []step{status(429, `{}`, "Retry-After", "7"), ok}, []time.Duration{7 * time.Second}, 2},
			{"429 with retry-after-ms", []step{status(429, `{}`, "Retry-After", "7", "Retry-After-Ms", "250"), ok}, []time.Duration{250 * time.Millisecond}, 2},
			{"500 then success", []step{status(500, `{"error":{"message":"boom"}}`), ok}, nil, 2},
			{"529 overloaded twice", []step{status(529, `{}`), status(529, `{}`), ok}, nil, 3},
			{"stream cut off mid-turn", []step{sseCut(stream, 5), ok}, nil, 2},
			{"connection dropped mid-turn", []step{hangUp(stream, 4), ok}, nil, 2},
		}
		for _, tt := range tests {
			t.Run(fl.name+"/"+tt.name, func(t *testing.T) {
				srv := serve(t, tt.steps...)
				p, rp := fl.open(srv.URL)
				waits := fastRetries(rp, 4)
				resp, err := p.Complete(context.Background(), hello)
				if err != nil {
					t.Fatal(err)
				}
				wantTools(t, resp)
				if srv.requests() != tt.requests || len(*waits) != tt.requests-1 {
					t.Errorf("%d requests, waits %v; want %d requests", srv.requests(), *waits, tt.requests)
				}
				if tt.waits != nil && !reflect.DeepEqual(*waits, tt.waits) {
					t.Errorf("waits %v, want %v", *waits, tt.waits)
				}
				for i := 1; i < srv.requests(); i++ {
					if string(srv.body(i)) != string(srv.body(0)) {
						t.Errorf("retry %d sent another request", i)
					}
				}
			})
		}
	}
}

func TestGivingUp(t *testing.T) {
	for _, fl := range flavours {
		stream := recording(t, fl.tools)
		tests := []struct {
			name     string
			step     step
			is       error
			requests int
			says     []string
		}{
			{"500 forever", status(500, `{"error":{"type":"api_error","message":"Internal server error"}}`),
				ErrUnavailable, 3, []string{"HTTP 500", "Internal server error", "after 3 attempts"}},
			{"cut forever", sseCut(stream, 3), ErrUnavailable, 3, []string{"ended before the turn"}},
			{"a wait too long", status(429, `{}`, "Retry-After", "3600"), ErrUnavailable, 1, []string{"HTTP 429", "wait 1h0m0s"}},
			{"401", status(401, fl.errBody), ErrRequest, 1, []string{"HTTP 401", "key"}},
			{"400", status(400, `not json at all`), ErrRequest, 1, []string{"HTTP 400", "not json at all"}},
		}
		for _, tt := range tests {
			t.Run(fl.name+"/"+tt.name, func(t *testing.T) {
				srv := serve(t, tt.step)
				p, rp := fl.open(srv.URL)
				fastRetries(rp, 2)
				resp, err := p.Complete(context.Background(), hello)
				if !errors.Is(err, tt.is) {
					t.Fatalf("err %v, want %v", err, tt.is)
				}
				for _, s := range tt.says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if srv.requests() != tt.requests {
					t.Errorf("%d requests, want %d", srv.requests(), tt.requests)
				}
				if len(resp.Message.ToolCalls) != 0 || resp.Message.Text != "" {
					t.Errorf("a failed request returned a turn: %+v", resp)
				}
			})
		}
	}
}

func TestUnreachable(t *testing.T) {
	for _, fl := range flavours {
		srv := serve(t, status(200, ""))
		srv.Close()
		p, rp := fl.open(srv.URL)
		fastRetries(rp, 1)
		_, err := p.Complete(context.Background(), hello)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "connect") {
			t.Errorf("%s: err %v, want ErrUnavailable from connecting", fl.name, err)
		}
	}
}

func TestCancelSlowStream(t *testing.T) {
	for _, fl := range flavours {
		t.Run(fl.name, func(t *testing.T) {
			started := make(chan struct{})
			srv := serve(t, stall(recording(t, fl.tools), started))
			p, rp := fl.open(srv.URL)
			fastRetries(rp, 4)
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-started; cancel() }()
			_, err := p.Complete(ctx, hello)
			if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err %v, want context.Canceled only", err)
			}
			if srv.requests() != 1 {
				t.Errorf("%d requests after cancelling, want 1", srv.requests())
			}
		})
	}
}

// A wait between retries ends with the context: with a real sleep of an
// hour, this test only finishes if it does.
func TestCancelDuringWait(t *testing.T) {
	for _, fl := range flavours {
		t.Run(fl.name, func(t *testing.T) {
			hit := make(chan struct{}, 10)
			limited := status(429, `{}`, "Retry-After", "3600")
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) { limited(w, r); hit <- struct{}{} })
			p, rp := fl.open(srv.URL)
			rp.maxWait = 2 * time.Hour
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-hit; cancel() }()
			_, err := p.Complete(ctx, hello)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
		})
	}
}
