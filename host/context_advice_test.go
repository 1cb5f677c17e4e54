package host

import (
	"context"
	"strings"
	"testing"
)

// Regression: a round that did not fit the budget was always said to need
// a larger budget or a lower max_tool_result, though lowering it cannot
// shorten a prompt or the model's turn, which are sent whole. The error
// now names what takes the room and gives only advice that can help.
func TestContextTooLargeAdviceFitsTheCause(t *testing.T) {
	words := strings.TrimSpace(strings.Repeat("word ", 3000))
	for _, c := range []struct {
		name, prompt, script string
		want                 string
	}{
		{"a long prompt", words, "turns:\n  - text: done\n", "the task's prompt takes about"},
		{"a long turn", "Write it down.",
			"turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: '" + words + "'}}]\n  - text: done\n",
			"the model's turn takes about"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{t: t, budget: 2000}
			eng, _ := recordingEngine(t, rec, nil)
			af := agentIn(t, "name: long\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n"+
				"tools: [{module: builtin, only: [write_file]}]\ncontext: {budget: 2000}\n", c.script)
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "long", Prompt: c.prompt})
			if err != nil || res.Status != StatusFailed || !strings.Contains(res.Reason, "more than context.budget 2000") {
				t.Fatalf("run: %+v, %v; want it failed for the budget", res, err)
			}
			if !strings.Contains(res.Reason, c.want) || !strings.Contains(res.Reason, "raise the budget") ||
				strings.Contains(res.Reason, "max_tool_result") {
				t.Fatalf("reason %q: want it to say %q and to raise the budget, not to lower max_tool_result", res.Reason, c.want)
			}
		})
	}
}
