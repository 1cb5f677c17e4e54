package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent file that names no workspace, run without --workspace,
// exited 1, as a run that failed, where docs/cli.md gives 2 to a wrong
// agent file or command line, as `cairn mcp` and `cairn workflow run`
// give it for the same want; `cairn chat` began a conversation whose
// every prompt failed so, and exited 0. Both exit 2 before anything
// runs, saying to set or pass one.
func TestRunWithoutAWorkspaceExitsUsage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(file, []byte("name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cairn(t, "run", "--store", t.TempDir(), "--cache", cacheForTests(t), "-f", file, "hi")
	if code != exitUsage || !strings.Contains(errOut, "no workspace") || !strings.Contains(errOut, "--workspace") {
		t.Errorf("run of an agent file without a workspace: exit %d, stderr %q; want exit 2 naming --workspace", code, errOut)
	}
	var stdout, stderr strings.Builder
	code = doMain([]string{"cairn", "chat", "--store", t.TempDir(), "--cache", cacheForTests(t), "-f", file}, strings.NewReader("hi\n"), &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "--workspace") || strings.Contains(stderr.String(), "a new conversation") {
		t.Errorf("chat of an agent file without a workspace: exit %d, stderr %q; want exit 2 naming --workspace, before a conversation", code, stderr.String())
	}
}
