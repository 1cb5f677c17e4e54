package main

import (
	"os"
	"path/filepath"
	"testing"
)

// scriptAgent writes, in a new directory, an agent file, the script its
// model plays (script.yaml) and an empty workspace, and returns the agent
// file's path and a store beside it.
func scriptAgent(t *testing.T, agentYAML, script string) (agentFile, store string) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script), 0o644))
	agentFile = filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agentFile, []byte(agentYAML), 0o644))
	return agentFile, filepath.Join(dir, "store")
}
