package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Regression: a workspace file whose name is not UTF-8 (a Latin-1 name,
// which Linux allows) reached the journal in what a call saw (grep walked
// the workspace), the journal's encoder wrote it as a text string, and its
// reader refused that string: every later command failed with "corrupt
// at offset …: invalid UTF-8 string", and the agent was lost. The journal
// now reads back any name it wrote, byte for byte.
func TestNameNotUTF8KeepsTheAgentReadable(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, `
name: latin1
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, `turns:
  - tool_calls:
      - {name: list_dir, input: {path: d}}
      - {name: grep, input: {pattern: caf}}
  - tool_calls:
      - {name: write_file, input: {path: d/next.txt, content: caf}}
  - text: done
`)
	bad := filepath.Join(af.Dir, "workspace", "d", "caf\xe9.txt")
	must(t, os.MkdirAll(filepath.Dir(bad), 0o755))
	must(t, os.WriteFile(bad, []byte("caf\n"), 0o644))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "l1", Prompt: "go"})
	must(t, err)
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	rec, err := store.Read("l1")
	if err != nil {
		t.Fatalf("the agent cannot be read after a round that saw a Latin-1 name: %v", err)
	}
	if rec.State.Round != 3 {
		t.Fatalf("read round %d, want 3", rec.State.Round)
	}
	if _, _, err := eng.Changes(context.Background(), "l1", 2); err != nil {
		t.Fatalf("changes of round 2: %v", err)
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "l1"}); err != nil {
		t.Fatalf("resume: %v", err)
	}
}
