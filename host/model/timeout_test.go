package model

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// A server that hangs, before its headers or in the middle of its stream,
// used to keep the run waiting for ever. The bounds here are short because
// the servers never answer: no machine is too slow for them. The test's own
// deadline only catches a provider that would wait without end.
func TestServerThatHangsTimesOut(t *testing.T) {
	for _, fl := range flavours {
		stream := recording(t, fl.tools)
		tests := []struct {
			name       string
			step       step
			wait, idle time.Duration
			says       string
		}{
			{"before its headers", hangs, 200 * time.Millisecond, time.Hour, "the server did not answer within 0.2 s"},
			{"mid-stream", stallAfter(stream, 3), time.Hour, 200 * time.Millisecond,
				"the server sent nothing for 0.2 s in the middle of its answer"},
		}
		for _, tt := range tests {
			t.Run(fl.name+"/"+tt.name, func(t *testing.T) {
				srv := serve(t, tt.step)
				p, rp := fl.open(srv.URL)
				fastRetries(rp, 2)
				e := endpointOf(p)
				e.wait, e.idle = tt.wait, tt.idle
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, err := p.Complete(ctx, hello)
				if ctx.Err() != nil {
					t.Fatalf("still waiting after a minute: %v", err)
				}
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tt.says) ||
					!strings.Contains(err.Error(), "after 3 attempts") {
					t.Fatalf("err %v, want ErrUnavailable saying %q after 3 attempts", err, tt.says)
				}
				if srv.requests() != 3 {
					t.Errorf("%d requests, want 3: a timeout is retried", srv.requests())
				}
			})
		}
	}
}

// Cancelling the context ends a request that hangs at once, whatever the
// bounds: here they are an hour, and the test's deadline a minute.
func TestCancelHungRequest(t *testing.T) {
	for _, fl := range flavours {
		for _, mid := range []bool{false, true} {
			t.Run(fl.name+"/"+map[bool]string{false: "before its headers", true: "mid-stream"}[mid], func(t *testing.T) {
				started := make(chan struct{})
				s := stall(recording(t, fl.tools), started)
				if !mid {
					s = func(w http.ResponseWriter, r *http.Request) { close(started); hangs(w, r) }
				}
				srv := serve(t, s)
				p, rp := fl.open(srv.URL)
				fastRetries(rp, 4)
				e := endpointOf(p)
				e.wait, e.idle = time.Hour, time.Hour
				ctx, cancel := context.WithCancel(context.Background())
				go func() { <-started; cancel() }()
				done := make(chan error, 1)
				go func() { _, err := p.Complete(ctx, hello); done <- err }()
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
						t.Fatalf("err %v, want context.Canceled only", err)
					}
				case <-time.After(time.Minute):
					t.Fatal("a cancelled request still waits after a minute")
				}
				if srv.requests() != 1 {
					t.Errorf("%d requests after cancelling, want 1", srv.requests())
				}
			})
		}
	}
}

func TestTimeoutFromSpec(t *testing.T) {
	var spec Spec
	if err := yaml.Unmarshal([]byte("{provider: openai, name: m, timeout: 5m}"), &spec); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		spec Spec
		want time.Duration
	}{
		{Spec{Provider: "openai"}, defaultTimeout},
		{spec, 5 * time.Minute},
	} {
		e := endpointOf(NewOpenAI(tt.spec))
		if e.wait != tt.want || e.idle != tt.want {
			t.Errorf("timeout %v: bounds %v and %v, want %v", tt.spec.Timeout, e.wait, e.idle, tt.want)
		}
	}
	if defaultTimeout != 2*time.Minute {
		t.Errorf("the default timeout is %v; docs/providers.md says 2 minutes", defaultTimeout)
	}
}
