package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a run refused as it starts, by a check that fails (a script
// model file that is no script, a workspace that is not there), stored the
// new agent's blobs (its agent file, script, modules, and its workspace as
// its first past) before the check, and left them for gc's hour. The
// checks now come first: a refused run leaves nothing in the store, as
// one refused for a tool module that is not there, or a context budget
// its tools do not fit, left nothing already.
func TestRefusedRunStoresNothing(t *testing.T) {
	const builtin = "tools: [{module: builtin}]\n"
	for _, tc := range []struct {
		name, agent, script string
		code                int
	}{
		{"a script that is no script", "workspace: workspace\n" + builtin, "turns: 5\n", exitUsage},
		{"a workspace that is not there", "workspace: nowhere\n" + builtin, "turns: [{text: hi}]\n", exitUsage},
		{"a tool module that is not there", "workspace: workspace\n" + builtin + "  - {module: nowhere.wasm}\n", "turns: [{text: hi}]\n", exitUsage},
		{"tools that do not fit the context budget", "workspace: workspace\n" + builtin + "context: {budget: 300}\n",
			"turns: [{text: hi}]\n", exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\n"+tc.agent, tc.script)
			must(t, os.WriteFile(filepath.Join(filepath.Dir(agentFile), "workspace", "notes.txt"), []byte("kept as the first past\n"), 0o644))
			code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "go")
			if code != tc.code {
				t.Fatalf("run: exit %d: %s; want %d", code, errOut, tc.code)
			}
			if blobs := storedBlobs(t, store); len(blobs) != 0 {
				t.Errorf("the refused run (%s) left %d blobs in the store:\n%s", strings.TrimSpace(errOut), len(blobs), strings.Join(blobs, "\n"))
			}
			if agents, _ := os.ReadDir(filepath.Join(store, "agents")); len(agents) != 0 {
				t.Errorf("the refused run left %d agents", len(agents))
			}
		})
	}
}

// storedBlobs are the files in the store's blobs/.
func storedBlobs(t *testing.T, store string) []string {
	t.Helper()
	var out []string
	for _, f := range storedFiles(t, store) {
		if strings.Contains(f, string(filepath.Separator)+"blobs"+string(filepath.Separator)) {
			out = append(out, f)
		}
	}
	return out
}
