package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command that takes no arguments went on without the ones it was
// given: `cairn gc --keep-rounds 1 AGENT` trimmed the old rounds of every
// agent in the store, not of AGENT alone, and `cairn tools ls
// MODULE.wasm` listed the built-in tools as if they were the module's.
// Such a command refuses arguments, exit 2, and does nothing.
func TestCommandsWithoutArgumentsRefuseThem(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append(append([]string{"run", "--id", "a"}, args...), "hi")...); code != 0 {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	events := filepath.Join(store, "agents", "a", "events.jsonl")
	before, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, cmd := range [][]string{
		{"gc", "--store", store, "--keep-rounds", "1", "other"},
		{"ls", "--store", store, "other"},
		{"tools", "ls", "module.wasm"},
		{"tools", "gc", "--cache", cache, "other"},
		{"workflow", "ls", "--store", store, "other"},
		{"chat", "--store", store, "--id", "a", "hello"},
		{"mcp", "--store", store, "--workspace", t.TempDir(), "other"},
		{"version", "other"},
	} {
		code, out, errOut := cairn(t, cmd...)
		name := strings.Join(cmd[:len(cmd)-1], " ")
		if code != exitUsage || out != "" || !strings.Contains(errOut, "takes no arguments") || !strings.Contains(errOut, `"`+cmd[len(cmd)-1]+`"`) {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want it refused, exit 2", name, cmd[len(cmd)-1], code, out, errOut)
		}
	}
	if after, err := os.ReadFile(events); err != nil || string(after) != string(before) {
		t.Errorf("gc with an argument trimmed the agent's events: %v", err)
	}
}
