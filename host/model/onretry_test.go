package model

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Retries were invisible: nothing told the host while a provider waited,
// up to a minute, between attempts. Request.OnRetry now hears of each one
// before its wait.
func TestOnRetryReportsEachRetry(t *testing.T) {
	for _, fl := range flavours {
		t.Run(fl.name, func(t *testing.T) {
			srv := serve(t, status(429, `{"error":{"type":"rate_limit_error","message":"slow down"}}`, "Retry-After", "7"),
				status(500, `{"error":{"message":"boom"}}`), sse(events(recording(t, fl.tools))...))
			p, rp := fl.open(srv.URL)
			waits := fastRetries(rp, 4)
			type retry struct {
				attempt int
				says    string
				wait    time.Duration
			}
			var got []retry
			req := hello
			req.OnRetry = func(attempt int, err error, wait time.Duration) {
				if len(*waits) != len(got) {
					t.Errorf("OnRetry called after the wait")
				}
				if errors.Is(err, ErrUnavailable) || !strings.HasPrefix(err.Error(), fl.name+": ") {
					t.Errorf("OnRetry's error %q", err)
				}
				got = append(got, retry{attempt, err.Error(), wait})
			}
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			wantTools(t, resp)
			want := []retry{{1, fl.name + ": HTTP 429: rate_limit_error: slow down", 7 * time.Second}}
			if len(*waits) == 2 {
				want = append(want, retry{2, fl.name + ": HTTP 500: boom", (*waits)[1]})
			}
			if !reflect.DeepEqual(got, want) || len(*waits) != 2 {
				t.Errorf("OnRetry heard %+v, waits %v; want %+v", got, *waits, want)
			}
		})
	}
}

// No retry, no call: a success, and a refusal, which is not retried.
func TestOnRetryQuietWithoutRetries(t *testing.T) {
	for _, fl := range flavours {
		for _, s := range []step{sse(events(recording(t, fl.tools))...), status(401, fl.errBody)} {
			srv := serve(t, s)
			p, rp := fl.open(srv.URL)
			fastRetries(rp, 4)
			req := hello
			req.OnRetry = func(int, error, time.Duration) { t.Errorf("%s: OnRetry called", fl.name) }
			_, _ = p.Complete(context.Background(), req)
		}
	}
}
