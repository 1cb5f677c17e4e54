package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent file whose memory: names no namespace cairn can keep, or
// whose max_parallel or limits are negative, is a wrong agent file: the
// memory namespace failed the run (exit 1) as it started, naming no file
// or line, and the others named no line. Each exits 2 before anything
// runs, naming the file and the line to change.
func TestRunOfAgentFileWithBadValuesNamesItsLine(t *testing.T) {
	const head = "name: a\nmodel: {provider: script, script: s.yaml}\ntools: [{module: builtin}]\n"
	for _, c := range []struct{ body, want string }{
		{head + "memory: ../team\n", "line 4: memory namespace \"../team\""},
		{head + "memory: \"\"\n", ""},
		{head + "max_parallel: -1\n", "line 4: max_parallel cannot be negative"},
		{head + "limits:\n  max_rounds: -3\n", "line 5: limits: max_rounds cannot be negative"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "agent.yaml")
		if err := os.WriteFile(file, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("turns: [{text: hi}]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		store := t.TempDir()
		code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "-w", dir, "-f", file, "hi")
		if c.want == "" {
			if code != exitDone {
				t.Errorf("%q: exit %d, stderr %q; want it to run", c.body, code, errOut)
			}
			continue
		}
		if code != exitUsage || !strings.Contains(errOut, "agent.yaml: "+c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 naming agent.yaml and %q", c.body, code, errOut, c.want)
		}
		if entries, _ := os.ReadDir(filepath.Join(store, "agents")); len(entries) > 0 {
			t.Errorf("%q: an agent was stored", c.body)
		}
	}
}
