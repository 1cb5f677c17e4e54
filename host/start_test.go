package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// noAgentDir fails the test if the store has anything of agent id.
func noAgentDir(t *testing.T, store checkpoint.Store, id string) {
	t.Helper()
	if store.Exists(id) {
		t.Fatalf("agent %s exists", id)
	}
	dir := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", id)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed start left %s behind: %v", dir, err)
	}
}

// Regression: a start that failed (a grant error, a bad fork) left a stub
// agent behind. It now leaves nothing.
func TestFailedStartLeavesNoAgent(t *testing.T) {
	eng, store := fileEngine(t)
	for name, yaml := range map[string]string{
		"module missing":     "name: s\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: missing.wasm}]\n",
		"tool not in module": "name: s\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin, only: [no_such_tool]}]\n",
		"grant too small":    "name: s\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin, only: [write_file], grant: {workspace: ro}}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			af := agentIn(t, yaml, "turns: [{text: hi}]\n")
			if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "stub", Prompt: "go"}); err == nil {
				t.Fatal("the run started")
			}
			noAgentDir(t, store, "stub")
		})
	}

	af := agentIn(t, "name: o\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n", forkScript)
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", From: "nope", As: "b", Workspace: filepath.Join(ws, "b")}); !errors.Is(err, ErrNoBookmark) {
		t.Fatalf("fork from an unknown bookmark: %v", err)
	}
	noAgentDir(t, store, "b")
	os.WriteFile(filepath.Join(ws, "taken"), []byte("x"), 0o644)
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", As: "b", Workspace: ws}); err == nil {
		t.Fatal("forked into a workspace that is not empty")
	}
	noAgentDir(t, store, "b")
}

// Regression: a relative --workspace was stored as given, so a resume from
// another directory did not find it. It is stored absolute.
func TestRelativeWorkspaceStoredAbsolute(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, "name: r\nmodel: {provider: script, script: script.yaml}\ntools: [{module: builtin}]\n", "turns: [{text: hi}]\n")
	t.Chdir(af.Dir) // agentIn made workspace/ beside the agent file
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "rel", Workspace: "workspace", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Read("rel")
	if err != nil {
		t.Fatal(err)
	}
	if ws := rec.State.Definition.Workspace; !filepath.IsAbs(ws) {
		t.Fatalf("stored workspace %q, want an absolute path", ws)
	}
	t.Chdir(t.TempDir())
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "rel"}); err != nil {
		t.Fatalf("resume from another directory: %v", err)
	}
}
