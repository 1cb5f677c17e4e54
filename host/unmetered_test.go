package host

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// warnings are the texts of the warning events of a run.
func warnings(events []Event) []string {
	var out []string
	for _, e := range events {
		if e.Type == EventWarning {
			out = append(out, e.Text)
		}
	}
	return out
}

// Regression: max_cost without the model's price counted no cost and
// never stopped a run, and said nothing. The run says so, once.
func TestMaxCostWithoutPriceIsSaid(t *testing.T) {
	for _, price := range []string{"", ", price: {input: 1, output: 2}"} {
		af := agentIn(t, `
name: costly
model: {provider: script, script: script.yaml`+price+`}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_cost: 0.01}
`, "turns:\n  - tool_calls: [{name: list_dir, input: {}}]\n  - tool_calls: [{name: list_dir, input: {}}]\n  - text: done\n")
		res, events := collect(t, RunOptions{Agent: af, Prompt: "look"})
		var said int
		for _, w := range warnings(events) {
			if strings.Contains(w, "max_cost is set but the model has no price") {
				said++
			}
		}
		if want := map[string]int{"": 1}[price]; res.Status != StatusDone || said != want {
			t.Errorf("price %q: %+v; the warning said %d times, want %d", price, res, said, want)
		}
	}
}

// Regression: a model server that reports no usage made max_tokens count
// nothing (a run of three turns ended "0 tokens"), silently. The run
// says max_tokens cannot count its turns.
func TestModelWithoutUsageIsSaid(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	af := agentIn(t, fmt.Sprintf(`
name: blind
model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_tokens: 50}
`, srv.URL), "")
	res, events := collect(t, RunOptions{Agent: af, Prompt: "hi"})
	if w := warnings(events); res.Status != StatusDone || len(w) != 1 || !strings.Contains(w[0], "reported no token usage") {
		t.Fatalf("run: %+v; warnings %q", res, w)
	}
}
