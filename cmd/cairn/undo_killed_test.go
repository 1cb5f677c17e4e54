package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// undoFiles is how many files the round that undo takes back rewrote:
// enough that undo, which syncs each file it puts back, takes long
// enough to be killed in the middle.
const undoFiles = 400

// undoAgent runs an agent whose last round rewrites undoFiles files of
// its workspace (flood), appends to log.txt and writes new.txt, and
// returns its store and workspace.
func undoAgent(t *testing.T, bin string) (store, ws string) {
	t.Helper()
	store = t.TempDir()
	return store, undoAgentIn(t, bin, store)
}

// undoAgentIn is undoAgent's agent, run in store (a directory or a
// PostgreSQL URL); it returns its workspace.
func undoAgentIn(t *testing.T, bin, store string) (ws string) {
	t.Helper()
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	ws = filepath.Join(dir, "workspace")
	must(t, os.Mkdir(ws, 0o755))
	for i := range undoFiles {
		must(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%06d", i)), []byte(fmt.Sprintf("before %d\n", i)), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(ws, "log.txt"), []byte("base\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(fmt.Sprintf(`
turns:
  - tool_calls: [{name: append, input: {path: a.txt, line: first}}]
  - tool_calls:
      - {name: flood, input: {n: %d}}
      - {name: append, input: {path: log.txt, line: second}}
      - {name: write_file, input: {path: new.txt, content: new}}
  - text: finished
`, undoFiles)), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: undone
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [append, flood], grant: {workspace: rw}}
sandbox: {timeout: 60s}
`), 0o644))
	if out, err := exec.Command(bin, "run", "--store", store, "--cache", cacheForTests(t), "--id", "v", "-f", agent).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	return ws
}

// undoneWorkspace fails t unless ws holds what it held before round 2.
func undoneWorkspace(t *testing.T, ws string) {
	t.Helper()
	for i := range undoFiles {
		name := fmt.Sprintf("f%06d", i)
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != fmt.Sprintf("before %d\n", i) {
			t.Fatalf("%s holds %q after the undo, want what it held before the round", name, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "log.txt")); string(b) != "base\n" {
		t.Errorf("log.txt holds %q after the undo", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("new.txt is still there after the undo")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "first\n" {
		t.Errorf("a.txt holds %q: the undo took back round 1 too", b)
	}
}

// undoAgain runs cairn undo --json and returns what it did.
func undoAgain(t *testing.T, bin, store string) (u struct {
	Round     int      `json:"round"`
	Restored  []string `json:"restored"`
	Conflicts []string `json:"conflicts"`
}) {
	t.Helper()
	out, err := exec.Command(bin, "undo", "--store", store, "--json", "v").CombinedOutput()
	if err != nil {
		t.Fatalf("undo again: %v\n%s", err, out)
	}
	must(t, json.Unmarshal(out, &u))
	return u
}

// Regression: an undo killed with SIGKILL part way through its round,
// and run again, said of every path the killed undo had put back "left
// f000000: it changed after the round", as if someone had changed it,
// and counted it as not restored. A real cairn undo is killed once it has
// taken back the round's last call (new.txt is gone) and while it puts
// back the first call's files; the undo run again takes the round back
// whole, says every path was restored and none was left, and the
// workspace holds what it held before the round.
func TestKilledUndoRunAgainSaysNoPathChangedAfterTheRound(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, ws := undoAgent(t, bin)

	undo := exec.Command(bin, "undo", "--store", store, "v")
	must(t, undo.Start())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "new.txt")); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("undo did not take new.txt back in 30s")
		}
	}
	undo.Process.Signal(syscall.SIGKILL)
	undo.Wait()
	if b, _ := os.ReadFile(filepath.Join(ws, fmt.Sprintf("f%06d", undoFiles-1))); string(b) != "x" {
		t.Fatalf("the kill came after undo had put back every file (the last holds %q): it must land in the middle", b)
	}

	u := undoAgain(t, bin, store)
	if u.Round != 2 || len(u.Conflicts) > 0 || len(u.Restored) != undoFiles+2 {
		t.Errorf("undo run again took back round %d, restored %d paths, left %d (%s); want round 2, %d paths restored, none left",
			u.Round, len(u.Restored), len(u.Conflicts), strings.Join(u.Conflicts[:min(3, len(u.Conflicts))], ", "), undoFiles+2)
	}
	undoneWorkspace(t, ws)
}

// Regression: an undo killed after it had put back every path of its
// round but before it removed the round's kept changes (part of them, or
// none) left the round to be undone again: the next undo took back round
// 2 a second time, saying every path "changed after the round" or
// restoring none, where the person asked for round 1. The kill is
// modelled by putting the round's kept changes back where they were
// after a whole undo; the next undo says round 2 is taken back, with
// every path restored and none left, and does not touch round 1.
func TestUndoKilledBeforeItForgotItsRoundTakesItBackOnce(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, ws := undoAgent(t, bin)
	round := filepath.Join(store, "agents", "v", "changes", "round-2")
	kept := filepath.Join(t.TempDir(), "round-2")
	if out, err := exec.Command("cp", "-a", round, kept).CombinedOutput(); err != nil {
		t.Fatalf("copy the round's kept changes: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "undo", "--store", store, "v").CombinedOutput(); err != nil {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	if out, err := exec.Command("cp", "-a", kept, round).CombinedOutput(); err != nil {
		t.Fatalf("put the round's kept changes back: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(round)
	must(t, err)
	if len(entries) < 2 {
		t.Fatalf("round 2 kept %d records; want one for each call that changed files", len(entries))
	}
	// A kill part way through the removal of the records leaves some.
	must(t, os.Remove(filepath.Join(round, entries[0].Name())))

	u := undoAgain(t, bin, store)
	if u.Round != 2 || len(u.Conflicts) > 0 {
		t.Errorf("undo run again took back round %d, left %d paths (%s); want round 2, none left",
			u.Round, len(u.Conflicts), strings.Join(u.Conflicts[:min(3, len(u.Conflicts))], ", "))
	}
	undoneWorkspace(t, ws)
	if slices.Contains(u.Restored, "a.txt") {
		t.Errorf("undo run again restored a.txt, of round 1")
	}
}
