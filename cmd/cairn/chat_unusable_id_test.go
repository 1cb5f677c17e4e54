package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A chat whose --id can never name an agent, a malformed id or, without an
// agent file, an agent that does not exist, is refused before it reads a
// line, with exit 2, where it said "a new conversation" and then failed
// every prompt while exiting 0.
func TestChatRefusesAnIdItCannotUse(t *testing.T) {
	store := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"malformed id with an agent file", []string{"-f", "../../examples/hello/agent.yaml", "--id", "../escape"}, `agent id "../escape"`},
		{"malformed id alone", []string{"--id", "a/b"}, `agent id "a/b"`},
		{"an agent that does not exist, without its file", []string{"--id", "nobody"},
			`agent "nobody" does not exist: give its agent file to make it: cairn chat -f AGENT_FILE --id nobody`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"chat"}, tc.args...), "--store", store, "--cache", cacheForTests(t))
			code, out, errOut := cairnIn(t, "hello\n", args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, errOut)
			}
			if strings.Contains(errOut, "a new conversation") || strings.Contains(out, "run ") {
				t.Errorf("the chat began:\nstdout: %s\nstderr: %s", out, errOut)
			}
		})
	}
	agents, _ := os.ReadDir(filepath.Join(store, "agents"))
	if len(agents) != 0 {
		t.Errorf("the store holds %d agents, want none", len(agents))
	}
}
