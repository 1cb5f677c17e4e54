package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: undo wrote what a file held before into a file beside it
// named after it, with .cairn-undo added, opened to truncate, and renamed
// it over the file: a file of the workspace so named, the agent's or a
// person's, was emptied and then gone. Undo writes beside the file under
// a name no file of the workspace has (one a guest cannot make, and a
// copy of the workspace leaves out), and leaves the others as they are.
func TestUndoLeavesAFileNamedLikeItsTempFileAlone(t *testing.T) {
	af := agentIn(t, poolAgent, `turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: new}}]
  - text: done
`)
	ws := af.WorkspaceDir()
	for name, content := range map[string]string{"a.txt": "old", "a.txt.cairn-undo": "a person's notes"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng, _ := fileEngine(t)
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "beside", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if u, err := eng.Undo(t.Context(), "beside"); err != nil || len(u.Restored) != 1 {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	if got := readFile(t, ws, "a.txt"); got != "old" {
		t.Errorf("a.txt after undo holds %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt.cairn-undo")); err != nil || string(b) != "a person's notes" {
		t.Errorf("a.txt.cairn-undo after undo: %q, %v", b, err)
	}
	if !overlay.IsApplyTemp(filepath.Base(undoTemp("a.txt"))) {
		t.Errorf("undo writes beside a file to %s, a name a guest can make", undoTemp("a.txt"))
	}
	entries, err := os.ReadDir(ws)
	if err != nil || len(entries) != 2 {
		t.Errorf("the workspace after undo: %v, %v", entries, err)
	}
}
