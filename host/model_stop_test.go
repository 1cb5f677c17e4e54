package host

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Regression: an answer the model's output limit cut off, or a refusal,
// ended the run "done" with nothing said; a failing attempt that was
// retried showed nothing while the run waited. Each is said in a warning.
func TestCutOffRefusedAndRetriedTurnsAreSaid(t *testing.T) {
	for _, tc := range []struct {
		name, chunk string
		failFirst   bool
		want        string
	}{
		{"length", `{"choices":[{"index":0,"delta":{"content":"The report says that the"},"finish_reason":"length"}]}`, false, "cut off at its output limit"},
		{"refusal", `{"choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":"stop"}]}`, false, "the model refused"},
		{"retry", `{"choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":"stop"}]}`, true, "attempt 1 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.failFirst && n.Add(1) == 1 {
					http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", tc.chunk)
			}))
			t.Cleanup(srv.Close)
			af := agentIn(t, fmt.Sprintf(`
name: said
model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: 2}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
`, srv.URL), "")
			res, events := collect(t, RunOptions{Agent: af, Prompt: "hi"})
			w := strings.Join(warnings(events), "\n")
			if res.Status != StatusDone || !strings.Contains(w, tc.want) {
				t.Fatalf("run: %+v; warnings:\n%s", res, w)
			}
		})
	}
}
