package main

import (
	"strings"
	"testing"
)

// Regression: a count of one was printed with its noun plural: "paused
// after 1 rounds: reached max_rounds (1 rounds since the prompt)", "1
// tool calls" in cairn show, "undid round 1: 1 paths restored". A real
// agent that runs one round, a call that writes one file, is printed
// with each noun singular, and two rounds plural.
func TestCountOfOneIsPrintedSingular(t *testing.T) {
	agentFile, store := scriptAgent(t, `name: one
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
limits: {max_rounds: 1}
`, `turns:
  - tool_calls:
      - {name: write_file, input: {path: one.txt, content: one}}
  - text: wrote one
`)
	cache := cacheForTests(t)
	steps := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"run", "--store", store, "--cache", cache, "--id", "one", "-f", agentFile, "go"}, exitPaused,
			[]string{"paused after 1 round", "reached max_rounds (1 round since the prompt)"}},
		{[]string{"show", "--store", store, "one"}, exitDone, []string{"round 1 · ", " · 1 tool call\n"}},
		{[]string{"resume", "--store", store, "--cache", cache, "one", "--max-rounds", "5"}, exitDone,
			[]string{"loaded agent one: 1 round committed", "done after 2 rounds"}},
		{[]string{"undo", "--store", store, "one"}, exitDone, []string{"undid round 1: 1 path restored"}},
	}
	for _, s := range steps {
		code, out, errOut := cairn(t, s.args...)
		all := out + errOut
		if code != s.code {
			t.Fatalf("cairn %s: exit %d, want %d\n%s", strings.Join(s.args, " "), code, s.code, all)
		}
		for _, w := range s.want {
			if !strings.Contains(all, w) {
				t.Errorf("cairn %s does not say %q:\n%s", s.args[0], w, all)
			}
		}
		for _, plural := range []string{" 1 rounds", " 1 tool calls", " 1 paths", " 1 messages", " 1 calls"} {
			if strings.Contains(all, plural) {
				t.Errorf("cairn %s says %q:\n%s", s.args[0], plural, all)
			}
		}
	}
}
