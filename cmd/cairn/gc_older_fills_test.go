package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: what a fork or resume --workspace of an older cairn, killed
// while it filled an agent's workspace, left beside it, a directory named
// after the agent and the workspace with no mark of it (.cairn-fill-
// AGENT-NAME; before that, of a fork, .cairn-fork-AGENT-NAME), was swept
// by that cairn's gc beside each agent's workspace, and by no gc since,
// which find what a fill left by its mark alone: it stayed for good. gc
// removes it again where it is provably cairn's: beside the workspace the
// agent the name gives records, of that workspace's name, held by no
// process, the agent not running; it says so, and --dry-run says it would.
// A directory of a fill's name of another agent, or another workspace,
// or a person's, is left.
func TestGCRemovesWhatAnOlderCairnsKilledFillLeftBesideAnAgentsWorkspace(t *testing.T) {
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns: [{text: hi}]\n")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "v", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	parent := filepath.Dir(agentFile) // the workspace's
	left := func(name string) string {
		d := filepath.Join(parent, name)
		must(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
		must(t, os.WriteFile(filepath.Join(d, "sub", "a.txt"), []byte("half\n"), 0o644))
		return d
	}
	older := []string{left(".cairn-fill-v-workspace"), left(".cairn-fork-v-workspace")}
	kept := []string{left(".cairn-fill-w-workspace"), left(".cairn-fill-v-other"), left(".cairn-fork-v-workspace-mine"), left(".cairn-fill-mine")}

	code, out, errOut := cairn(t, "gc", "--store", store, "--dry-run")
	for _, d := range older {
		if code != exitDone || !strings.Contains(out, "would remove "+d+",") {
			t.Errorf("gc --dry-run does not say it would remove %s: exit %d\n%s%s", d, code, out, errOut)
		}
		if _, err := os.Stat(d); err != nil {
			t.Errorf("gc --dry-run removed %s: %v", d, err)
		}
	}
	code, out, errOut = cairn(t, "gc", "--store", store)
	for _, d := range older {
		if code != exitDone || !strings.Contains(out, "removed "+d+",") {
			t.Errorf("gc does not say it removed %s: exit %d\n%s%s", d, code, out, errOut)
		}
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("gc left %s: %v", d, err)
		}
	}
	for _, d := range kept {
		if b, err := os.ReadFile(filepath.Join(d, "sub", "a.txt")); err != nil || string(b) != "half\n" || strings.Contains(out, d) {
			t.Errorf("gc touched %s, which is not provably an older fill's of the agent's workspace: %q, %v\n%s", d, b, err, out)
		}
	}
}
