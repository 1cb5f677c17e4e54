package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
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

// Regression: a file a round removed came back from undo with mode 0644,
// since a removal's effect keeps no mode. A guest cannot change a file's
// mode, so the mode the file had is the one the store's pasts keep of it
// at the boundary before the round; where they keep none (the copy off,
// as for an agent an older cairn kept no pasts of), it comes back 0644.
func TestUndoPutsBackAFileTheRoundRemovedWithTheModeItHad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit WorkspaceLimit
		want  os.FileMode
	}{
		{"pasts", WorkspaceLimit{}, 0o755},
		{"no pasts", WorkspaceLimit{Off: true}, 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			af := agentIn(t, `
name: remover
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [remove], grant: {workspace: rw}}]
`, `turns:
  - tool_calls: [{name: remove, input: {path: run.sh}}]
  - text: done
`)
			copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
			ws := af.WorkspaceDir()
			if err := os.WriteFile(filepath.Join(ws, "run.sh"), []byte("echo old"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(ws, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			store, err := checkpoint.OpenFileStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			eng, err := NewEngine(t.Context(), Config{Store: store, CacheDir: testCache, WorkspaceLimit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close(t.Context())
			if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "remover", Prompt: "go"}); err != nil || res.Status != StatusDone {
				t.Fatalf("run: %+v, %v", res, err)
			}
			if _, err := os.Stat(filepath.Join(ws, "run.sh")); !os.IsNotExist(err) {
				t.Fatalf("run.sh after the round: %v", err)
			}
			if u, err := eng.Undo(t.Context(), "remover"); err != nil || len(u.Restored) != 1 {
				t.Fatalf("undo: %+v, %v", u, err)
			}
			fi, err := os.Stat(filepath.Join(ws, "run.sh"))
			if err != nil || fi.Mode().Perm() != tc.want || readFile(t, ws, "run.sh") != "echo old" {
				t.Fatalf("run.sh after undo: %v, %v; want mode %v", fi, err, tc.want)
			}
		})
	}
}

// Regression: a directory a round removed came back from undo with mode
// 0755 (less the umask), whatever mode it had: it gets the mode the
// store's pasts keep of it at the boundary before the round.
func TestUndoPutsBackADirectoryTheRoundRemovedWithTheModeItHad(t *testing.T) {
	af := agentIn(t, `
name: remover
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [remove], grant: {workspace: rw}}]
`, `turns:
  - tool_calls: [{name: remove, input: {path: private}}]
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	ws := af.WorkspaceDir()
	if err := os.Mkdir(filepath.Join(ws, "private"), 0o700); err != nil {
		t.Fatal(err)
	}
	eng, _ := fileEngine(t)
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "remover", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "private")); !os.IsNotExist(err) {
		t.Fatalf("private after the round: %v", err)
	}
	if u, err := eng.Undo(t.Context(), "remover"); err != nil || len(u.Restored) != 1 {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "private")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("private after undo: %v, %v; want a directory of mode 0700", fi, err)
	}
}
