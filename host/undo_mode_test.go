package host

import (
	"os"
	"path/filepath"
	"testing"
)

// Regression: undo put a file back with mode 0644, whatever mode it had:
// an executable script that a round wrote came back from `cairn undo`
// with what it held, but no longer executable. A guest cannot change a
// file's mode, so a file a round writes keeps its mode, which its call's
// effect records (the mode it is applied with); undo puts it back with
// that mode, its own permission bits, not the process's umask.
func TestUndoPutsBackAFileWithTheModeItHad(t *testing.T) {
	af := agentIn(t, poolAgent, `turns:
  - tool_calls: [{name: write_file, input: {path: run.sh, content: "echo new"}}, {name: write_file, input: {path: ro.txt, content: "new"}}]
  - text: done
`)
	ws := af.WorkspaceDir()
	for name, mode := range map[string]os.FileMode{"run.sh": 0o755, "ro.txt": 0o400} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(ws, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	eng, _ := fileEngine(t)
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "modes", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	wantMode := func(when, name string, mode os.FileMode, content string) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(ws, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, ws, name); fi.Mode().Perm() != mode || got != content {
			t.Errorf("%s: %s has mode %v and holds %q, want %v and %q", when, name, fi.Mode().Perm(), got, mode, content)
		}
	}
	wantMode("after the round", "run.sh", 0o755, "echo new")
	wantMode("after the round", "ro.txt", 0o400, "new")
	u, err := eng.Undo(t.Context(), "modes")
	if err != nil || len(u.Restored) != 2 || len(u.Conflicts) != 0 {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	wantMode("after undo", "run.sh", 0o755, "old")
	wantMode("after undo", "ro.txt", 0o400, "old")
}
