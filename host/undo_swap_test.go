package host

import (
	"os"
	"path/filepath"
	"testing"
)

// Regression: a call that turned a file into a directory holding files,
// or a directory of files into a file, was taken back path by path in the
// order of the paths: undo renamed the file over the directory (or made
// the directory where the file stood), failed, and left the round half
// taken back. Each is now taken back whole.
func TestUndoOfACallThatSwappedAFileAndADirectoryTakesItBackWhole(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: swapper
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [swap], grant: {workspace: rw}}]
sandbox: {timeout: 10s}
`, `
turns:
  - tool_calls: [{name: swap, input: {path: x}}]
  - tool_calls: [{name: swap, input: {path: d}}]
  - text: swapped
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	ws := af.WorkspaceDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("x", "a file\n")
	write("d/a", "in d\n")
	write("d/b", "also in d\n")
	res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "swapper", Prompt: "go"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "x")); err != nil || !fi.IsDir() {
		t.Fatalf("x after the run: %v, %v; want a directory", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "d")); err != nil || fi.IsDir() {
		t.Fatalf("d after the run: %v, %v; want a file", fi, err)
	}

	u, err := eng.Undo(t.Context(), "swapper")
	if err != nil || u.Round != 2 || len(u.Conflicts) != 0 {
		t.Fatalf("undo of the round that made d a file: %+v, %v", u, err)
	}
	for p, want := range map[string]string{"d/a": "in d\n", "d/b": "also in d\n"} {
		if b, err := os.ReadFile(filepath.Join(ws, p)); err != nil || string(b) != want {
			t.Fatalf("%s after undo: %q, %v; want %q", p, b, err, want)
		}
	}
	u, err = eng.Undo(t.Context(), "swapper")
	if err != nil || u.Round != 1 || len(u.Conflicts) != 0 {
		t.Fatalf("undo of the round that made x a directory: %+v, %v", u, err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "x")); err != nil || string(b) != "a file\n" {
		t.Fatalf("x after undo: %q, %v; want the file it was", b, err)
	}
}
