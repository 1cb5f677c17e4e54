package host

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseAgentFile feeds ParseAgentFile bytes an agent file may hold,
// which may come from someone else: it never panics, refuses with a
// message, and a file it accepts validates again as it stands.
func FuzzParseAgentFile(f *testing.F) {
	for _, name := range []string{"hello", "team", "openai", "anthropic"} {
		if data, err := os.ReadFile(filepath.Join("..", "examples", name, "agent.yaml")); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("name: a\nmodel: {provider: script, script: s.yaml}\ntools: [{module: builtin}]\n" +
		"context: {budget: 100, policy: drop, keep_turns: 2}\napprovals: [{tool: write_file, args: {path: \"a/**\"}, action: ask}]\n"))
	f.Add([]byte("name: a\nmodel: {provider: openai}\nmcp: [{name: m, command: [x]}]\nlimits: {max_time: 1h}\n"))
	f.Add([]byte("name: a\n---\nname: b\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("name: &x a\nmodel: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		af, err := ParseAgentFile(data, "/agent-files")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal with no message")
			}
			return
		}
		if err := af.Validate(); err != nil {
			t.Fatalf("accepted, then refused by Validate: %v", err)
		}
	})
}
