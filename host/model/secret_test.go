package model

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sentKey is the key a request carried, in either provider's header.
func sentKey(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + r.Header.Get("X-Api-Key")
}

// echoKey answers with code and an error message that repeats the key the
// request carried, as OpenAI's 401 does.
func echoKey(code int) step {
	return func(w http.ResponseWriter, r *http.Request) {
		status(code, `{"error":{"type":"invalid_request_error","message":"Incorrect API key provided: `+sentKey(r)+`."}}`)(w, r)
	}
}

// echoKeyInStream streams an error that repeats the key.
func echoKeyInStream(provider string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		msg := `{"type":"invalid_request_error","message":"Incorrect API key provided: ` + sentKey(r) + `"}`
		ev := "data: {\"error\":" + msg + "}\n\n"
		if provider == "anthropic" {
			ev = anEv(`{"type":"error","error":` + msg + `}`)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ev)
	}
}

// A key the server echoed in its error went into the journal, the events
// and `cairn show`. It is masked in every error a provider returns, and in
// the errors it reports before each retry.
func TestKeyEchoedInErrorIsMasked(t *testing.T) {
	const key = "sk-SECRETKEY456"
	t.Setenv("TEST_MASKED_KEY", key)
	for _, fl := range flavours {
		tests := []struct {
			name     string
			step     step
			is       error
			requests int
		}{
			{"401", echoKey(401), ErrRequest, 1},
			{"500, retried", echoKey(500), ErrUnavailable, 3},
			{"in the stream", echoKeyInStream(fl.name), ErrRequest, 1},
		}
		for _, tt := range tests {
			t.Run(fl.name+"/"+tt.name, func(t *testing.T) {
				srv := serve(t, tt.step)
				p, err := Open(Spec{Provider: fl.name, Name: "m", BaseURL: srv.URL, APIKeyEnv: "TEST_MASKED_KEY"})
				if err != nil {
					t.Fatal(err)
				}
				fastRetries(&endpointOf(p).retry, 2)
				var errs []error
				req := hello
				req.OnRetry = func(_ int, err error, _ time.Duration) { errs = append(errs, err) }
				_, err = p.Complete(context.Background(), req)
				errs = append(errs, err)
				if !errors.Is(err, tt.is) || srv.requests() != tt.requests {
					t.Fatalf("err %v after %d requests, want %v after %d", err, srv.requests(), tt.is, tt.requests)
				}
				for _, err := range errs {
					if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "Incorrect API key provided: [key masked]") {
						t.Errorf("error %q does not mask the key", err)
					}
				}
				if len(errs) != tt.requests {
					t.Errorf("%d errors for %d requests", len(errs), tt.requests)
				}
			})
		}
	}
}
