package netguard

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Regression: a call stopped by its own time limit (limits: {timeout},
// cairn exec --timeout) while a request waited was told "no response
// within 30s (net: {timeout})": the grant's timeout, which had not
// fired. The error names the limit that did, waiting for the response's
// head or for its body.
func TestCallTimeLimitIsNotTheGrantTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		<-release
	})
	for _, tc := range []struct {
		name    string
		grant   time.Duration
		call    time.Duration
		path    string
		says    string
		notSays string
	}{
		{"call's limit, waiting for the head", 0, 100 * time.Millisecond, "/hang", "the call's time limit (limits: {timeout}", "net: {timeout}"},
		{"call's limit, waiting for the body", 0, 100 * time.Millisecond, "/stall", "the body did not come whole within the call's time limit (limits: {timeout}", "net: {timeout}"},
		{"grant's timeout, waiting for the head", 100 * time.Millisecond, time.Minute, "/hang", "no response within 100ms (net: {timeout})", "call's time limit"},
		{"grant's timeout, waiting for the body", 100 * time.Millisecond, time.Minute, "/stall", "the body did not come whole within 100ms (net: {timeout}): 7 bytes of it came, and the tool is not given them; the request reached the remote side, which answered 200", "call's time limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := guard(t, Rules{Allow: []string{s.hostPort()}, Timeout: tc.grant})
			ctx, cancel := context.WithTimeout(context.Background(), tc.call)
			defer cancel()
			_, err := c.RoundTrip(ctx, get(s.URL+tc.path))
			if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), tc.notSays) {
				t.Fatalf("got %v; want it to say %q and not %q", err, tc.says, tc.notSays)
			}
		})
	}
}
