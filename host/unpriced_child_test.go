package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a sub-agent whose model had no price spent tokens that
// cost nothing toward its tree's max_cost, without a word: only the
// sub-agent's own limits were looked at. And the script model took no
// price at all, so max_cost could not be tried without a paid model.
// The script model now costs its turns by its price, and an unpriced
// sub-agent of a tree with max_cost says its turns are not counted.
func TestUnpricedSubAgentOfACostLimitedTreeIsSaid(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: lead
model: {provider: script, script: script.yaml, price: {input: 10, output: 10}}
workspace: workspace
tools: [{module: builtin}]
limits: {max_cost: 1}
agents:
  - name: kid
    description: answers
    model: {provider: script, script: kid.yaml}
    tools: [{module: builtin, only: [read_file]}]
`, `turns:
  - tool_calls: [{name: delegate, input: {agent: kid, task: say hi}}]
  - text: done
`)
	must(t, os.WriteFile(filepath.Join(af.Dir, "kid.yaml"), []byte("turns:\n  - text: hi\n"), 0o644))
	var warnings []Event
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "tree", OnEvent: func(e Event) {
		if e.Type == EventWarning {
			warnings = append(warnings, e)
		}
	}})
	must(t, err)
	if res.Status != StatusDone || res.Usage.CostMicroUSD == 0 {
		t.Fatalf("run: %+v; want done, its scripted turns costed", res)
	}
	var said bool
	for _, w := range warnings {
		if strings.Contains(w.Agent, "kid") && strings.Contains(w.Text, "tree's max_cost") {
			said = true
		}
		if w.Agent == "tree" {
			t.Errorf("the priced lead was warned: %q", w.Text)
		}
	}
	if !said {
		t.Errorf("warnings %+v; want the unpriced sub-agent's", warnings)
	}
}
