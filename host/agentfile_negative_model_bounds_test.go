package host

import (
	"context"
	"strings"
	"testing"
)

// A negative model.timeout or model.max_tokens was taken without a word
// and meant the default, where limits.max_time refuses a negative
// duration. Both are refused at their line.
func TestAgentFileRefusesNegativeModelBounds(t *testing.T) {
	const head = "name: a\nmodel:\n  provider: openai\n  name: m\n"
	const tools = "tools: [{module: builtin}]\n"
	for src, want := range map[string]string{
		head + "  timeout: -5s\n" + tools:   "line 5: model.timeout -5s: want a duration above 0 (or leave it out for 2m)",
		head + "  max_tokens: -1\n" + tools: "line 5: model.max_tokens -1: want a number of tokens above 0 (or leave it out for the provider's default)",
	} {
		if _, err := ParseAgentFile([]byte(src), t.TempDir()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", src, err, want)
		}
	}
}

// An agent an earlier cairn made from a file with such amounts (it took
// them) goes on as it started: its stored agent file is not checked again.
func TestStoredAgentFileWithUncheckedAmountsGoesOn(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, "name: old\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns: [{text: one}, {text: two}]\n")
	src := []byte("name: old\nmodel: {provider: script, script: script.yaml, timeout: -5s, max_tokens: -1, price: {input: .nan}}\n" +
		"workspace: workspace\ntools: [{module: builtin}]\nlimits: {max_cost: .nan}\n")
	if _, err := ParseAgentFile(src, af.Dir); err == nil {
		t.Fatal("a new agent file with these amounts was taken")
	}
	stored, err := parseStored(src, af.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Run(context.Background(), RunOptions{Agent: stored, ID: "old", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), RunOptions{ID: "old", Prompt: "again"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("the agent did not go on: %v %+v", err, res)
	}
}
