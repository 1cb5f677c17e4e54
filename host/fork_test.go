package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

const forkScript = `
turns:
  - tool_calls: [{name: write_file, input: {path: notes.txt, content: one}}]
  - text: wrote one
  - tool_calls: [{name: write_file, input: {path: notes.txt, content: two}}]
  - text: wrote two
  - tool_calls: [{name: write_file, input: {path: more.txt, content: three}}]
  - text: wrote three
`

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// A fork from a bookmark starts with the conversation and the workspace of
// that moment; afterwards neither agent's runs reach the other's
// workspace or journal.
func TestForkIsolation(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, `
name: orig
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, forkScript)
	wsA := af.WorkspaceDir()
	run := func(id string) {
		t.Helper()
		res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: id, Prompt: "go"})
		if err != nil || res.Status != StatusDone {
			t.Fatalf("run %s: %+v, %v", id, res, err)
		}
	}
	run("a")
	mark, err := eng.Snapshot(t.Context(), "a", "first")
	if err != nil || mark.Round != 2 || mark.Label != "first" {
		t.Fatalf("snapshot: %+v, %v", mark, err)
	}
	run("a") // notes.txt becomes "two"
	wsB := filepath.Join(t.TempDir(), "b-workspace")
	f, err := eng.Fork(t.Context(), ForkOptions{ID: "a", From: "first", As: "b", Workspace: wsB})
	if err != nil {
		t.Fatal(err)
	}
	st := stateOfFork(t, eng, f)
	if st.Round != 2 || len(st.Messages) != 4 || *st.Lineage != (checkpoint.Lineage{Agent: "a", Round: 2, Label: "first"}) {
		t.Fatalf("forked state: round %d, %d messages, lineage %+v", st.Round, len(st.Messages), st.Lineage)
	}
	if got := readFile(t, wsB, "notes.txt"); got != "one" {
		t.Fatalf("fork's notes.txt = %q, want the bookmark's %q", got, "one")
	}
	// A fork not run yet has no events, and reading them is not an error
	// (regression: it was ErrNotFound, a 404 in the web view).
	if err := ReadHistory(t.Context(), store, "b", false, func(Event, []byte) error {
		return errors.New("an event of a fork never run")
	}); err != nil {
		t.Fatalf("history of the new fork: %v", err)
	}

	aDir := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", "a")
	before := treeHash(t, aDir)
	run("b") // the fork's third turn: notes.txt becomes "two", in its own workspace
	if got := readFile(t, wsA, "notes.txt"); got != "two" || treeHash(t, aDir) != before {
		t.Fatal("the fork's run reached the original's workspace or store")
	}
	if got := readFile(t, wsB, "notes.txt"); got != "two" {
		t.Fatalf("the fork's own write: %q", got)
	}
	run("a") // the original's fifth turn writes more.txt
	if readFile(t, wsB, "more.txt") != "" || readFile(t, wsA, "more.txt") != "three" {
		t.Fatal("the original's run reached the fork's workspace")
	}
	in, err := Inspect(t.Context(), store, "b")
	if err != nil || in.State.Lineage.Agent != "a" || len(in.State.Runs) != 1 {
		t.Fatalf("inspect the fork: %+v, %v", in, err)
	}
}

func TestForkRefusals(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, "name: o\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n", forkScript)
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", From: "nope", As: "b", Workspace: filepath.Join(ws, "b")}); !errors.Is(err, ErrNoBookmark) {
		t.Errorf("unknown bookmark: %v", err)
	}
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "nobody", As: "b", Workspace: filepath.Join(ws, "b")}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("unknown agent: %v", err)
	}
	os.WriteFile(filepath.Join(ws, "taken"), []byte("x"), 0o644)
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", As: "b", Workspace: ws}); err == nil {
		t.Error("forked into a workspace that is not empty")
	}
	f, err := eng.Fork(t.Context(), ForkOptions{ID: "a", As: "c"})
	if err != nil || f.Workspace != af.WorkspaceDir()+"-c" || readFile(t, f.Workspace, "notes.txt") != "one" {
		t.Fatalf("fork of the last round beside the original: %+v, %v", f, err)
	}
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", As: "c", Workspace: filepath.Join(ws, "c")}); !errors.Is(err, checkpoint.ErrExists) {
		t.Errorf("fork onto an existing agent: %v", err)
	}
}

// stateOfFork is the state of the agent Fork made, checked against what
// Fork said of it.
func stateOfFork(t *testing.T, eng *Engine, f *Forked) *checkpoint.State {
	t.Helper()
	in, err := Inspect(t.Context(), eng.Store(), f.Agent)
	if err != nil {
		t.Fatal(err)
	}
	st := in.State
	l := st.Lineage
	if l == nil || l.Agent != f.From || l.Round != f.Round || l.Label != f.Label || st.Definition.Workspace != f.Workspace {
		t.Fatalf("Fork said %+v, the store holds lineage %+v, workspace %s", f, l, st.Definition.Workspace)
	}
	return st
}
