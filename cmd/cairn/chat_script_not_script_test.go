package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a chat whose agent file's script model file is no script
// (turns: 5) started a conversation, printed the script's error at each
// prompt and exited 0, where `cairn run` refuses the file with exit 2. It
// is refused before the first prompt, with exit 2 naming the file and
// its line, and no agent is made.
func TestChatScriptFileNotScriptExitsTwo(t *testing.T) {
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"# a script\nturns: 5\n")
	const want = "script.yaml: script: line 2: want a list, found `5`"
	code, out, errOut := cairnIn(t, "hi\nagain\n", "chat", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile)
	if code != exitUsage || !strings.Contains(errOut, want) {
		t.Fatalf("chat: exit %d\n%s%s; want exit %d saying %s", code, out, errOut, exitUsage, want)
	}
	if strings.Contains(errOut, "conversation") || strings.Count(errOut, want) != 1 {
		t.Errorf("chat started a conversation, or said the error more than once:\n%s", errOut)
	}
	for _, f := range storedFiles(t, store) {
		if !strings.Contains(f, "blobs") {
			t.Errorf("chat: stored %s", f)
		}
	}

	// An agent that exists, given the script with --model.
	good := filepath.Join(filepath.Dir(agentFile), "good.yaml")
	must(t, os.WriteFile(good, []byte("turns:\n  - text: hi\n"), 0o644))
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "--model", "script:"+good, "go"); code != exitDone {
		t.Fatalf("run with a good script: exit %d: %s", code, errOut)
	}
	script := filepath.Join(filepath.Dir(agentFile), "script.yaml")
	code, out, errOut = cairnIn(t, "hi\n", "chat", "--store", store, "--cache", cacheForTests(t), "--id", "a", "--model", "script:"+script)
	if code != exitUsage || !strings.Contains(errOut, want) || strings.Contains(errOut, "conversation") {
		t.Fatalf("chat --id --model: exit %d\n%s%s; want exit %d saying %s, before any prompt", code, out, errOut, exitUsage, want)
	}
}
