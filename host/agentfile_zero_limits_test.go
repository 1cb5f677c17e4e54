package host

import (
	"context"
	"strings"
	"testing"
)

// Regression: a limit written as 0 in an agent file was taken without a
// word, and meant no limit at all (max_rounds: 0 meant 50 rounds), where a
// user who writes `max_time: 0` may as well mean no time, and a negative
// one is refused. Each is refused at its line, saying to give a limit
// above 0 or leave the key out; an agent file without them is taken.
func TestAgentFileRefusesLimitsOfZero(t *testing.T) {
	const head = "name: a\nmodel: {provider: openai, name: m}\ntools: [{module: builtin}]\nlimits:\n"
	for src, want := range map[string]string{
		head + "  max_rounds: 0\n":  "line 5: limits: max_rounds 0: want 1 or more, or leave the key out for 50",
		head + "  max_tokens: 0\n":  "line 5: limits: max_tokens 0: want 1 or more, or leave the key out for no limit",
		head + "  max_cost: 0\n":    "line 5: limits: max_cost 0: want an amount above 0, or leave the key out for no limit",
		head + "  max_cost: -0.0\n": "line 5: limits: max_cost 0: want an amount above 0",
		head + "  max_time: 0s\n":   "line 5: limits: max_time 0s: want a duration above 0, or leave the key out for no limit",
		head + "  max_time: 0\n":    "line 5: limits: max_time 0s: want a duration above 0",
	} {
		if _, err := ParseAgentFile([]byte(src), t.TempDir()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", src, err, want)
		}
	}
	if _, err := ParseAgentFile([]byte(head+"  max_time: 1s\n  max_rounds: 1\n  max_tokens: 1\n  max_cost: 0.01\n"), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// A sub-agent's, when the run resolves its definitions.
	eng, _ := fileEngine(t)
	af := agentIn(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\nagents:\n"+
		"  - {name: b, description: d, model: {provider: script, script: script.yaml}, tools: [{module: builtin}], limits: {max_time: 0s}}\n", "turns: [{text: done}]\n")
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"})
	if want := "limits: max_time 0s: want a duration above 0"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("run: %v, want an error with %q", err, want)
	}
}
