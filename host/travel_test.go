package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// travelled runs forkScript's three tasks in a workspace that starts with
// seed.txt, and returns the engine, the store and the workspace.
func travelled(t *testing.T) (*Engine, checkpoint.Store, string) {
	t.Helper()
	eng, store := fileEngine(t)
	af := agentIn(t, `
name: orig
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, forkScript)
	ws := af.WorkspaceDir()
	if err := os.WriteFile(filepath.Join(ws, "seed.txt"), []byte("seed"), 0o640); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"})
		if err != nil || res.Status != StatusDone {
			t.Fatalf("run: %+v, %v", res, err)
		}
	}
	return eng, store, ws
}

// The store keeps the workspace the agent started with and every round's
// changes: a resume into an empty directory elsewhere finds the workspace
// as it is, file for file, mode for mode.
func TestResumeMaterializesTheWorkspace(t *testing.T) {
	eng, store, ws := travelled(t)
	pasts, err := store.(checkpoint.Timeline).Pasts("a")
	if err != nil || len(pasts) != 7 || pasts[0].Base == "" || len(pasts[1].Changes) != 1 || len(pasts[2].Changes) != 0 {
		t.Fatalf("pasts: %d, %v", len(pasts), err)
	}
	elsewhere := filepath.Join(t.TempDir(), "node-b")
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Workspace: elsewhere}); err != nil {
		t.Fatal(err)
	}
	if got, want := dirTree(t, elsewhere), dirTree(t, ws); !maps.Equal(got, want) || len(got) != 3 {
		t.Fatalf("the materialized workspace differs from the original:\n got %v\nwant %v", got, want)
	}
	if fi, err := os.Stat(filepath.Join(elsewhere, "seed.txt")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("seed.txt: %v, %v", fi, err)
	}
	rec, err := store.Read("a")
	if err != nil || rec.State.Definition.Workspace != elsewhere {
		t.Fatalf("the agent's workspace is now %q, %v", rec.State.Definition.Workspace, err)
	}
}

// dirTree is a directory's files and directories by relative path: content
// and mode, "/" for a directory.
func dirTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "/"
			return nil
		}
		fi, _ := d.Info()
		b, err := os.ReadFile(p)
		out[rel] = fmt.Sprintf("%s %v", b, fi.Mode().Perm())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A workspace directory that holds something else than the store's copy
// is refused with every difference named and nothing changed, unless the
// store's copy is taken.
func TestResumeRefusesADifferingWorkspace(t *testing.T) {
	eng, _, ws := travelled(t)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.CopyFS(other, os.DirFS(ws)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("changed"), 0o644)
	os.WriteFile(filepath.Join(other, "extra.txt"), []byte("mine"), 0o644)
	os.Remove(filepath.Join(other, "more.txt"))
	before := treeHash(t, other)
	_, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Workspace: other})
	var de *WorkspaceDiffError
	if !errors.Is(err, ErrWorkspaceDiffers) || !errors.As(err, &de) || len(de.Diffs) != 3 {
		t.Fatalf("got %v", err)
	}
	want := map[string]string{"notes.txt": "content", "extra.txt": "extra", "more.txt": "missing"}
	for _, d := range de.Diffs {
		if want[d.Path] != d.What {
			t.Fatalf("diff %+v, want %v", d, want)
		}
	}
	if treeHash(t, other) != before {
		t.Fatal("a refused resume changed the directory")
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Workspace: other, TakeStoreWorkspace: true}); err != nil {
		t.Fatal(err)
	}
	if readFile(t, other, "notes.txt") != "two" || readFile(t, other, "more.txt") != "three" || readFile(t, other, "extra.txt") != "" {
		t.Fatal("the store's copy was not taken")
	}
}

// A fork at any past round starts with that round's conversation and the
// workspace as it was then; round 0 is the agent as it started.
func TestForkAtAnyRound(t *testing.T) {
	eng, _, _ := travelled(t)
	for _, tc := range []struct {
		round       int
		messages    int
		notes, more string
	}{
		{0, 0, "", ""},
		{1, 3, "one", ""},
		{3, 7, "two", ""},
		{6, 12, "two", "three"},
	} {
		ws := filepath.Join(t.TempDir(), "ws")
		f, err := eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: tc.round, As: "f" + string(rune('0'+tc.round)), Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		st := stateOfFork(t, eng, f)
		if st.Round != tc.round || len(st.Messages) != tc.messages || st.Lineage.Round != tc.round {
			t.Fatalf("fork at round %d: round %d, %d messages", tc.round, st.Round, len(st.Messages))
		}
		if readFile(t, ws, "notes.txt") != tc.notes || readFile(t, ws, "more.txt") != tc.more || readFile(t, ws, "seed.txt") != "seed" {
			t.Fatalf("fork at round %d: workspace %q %q", tc.round, readFile(t, ws, "notes.txt"), readFile(t, ws, "more.txt"))
		}
	}
	_, err := eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: 9, As: "f9"})
	if !errors.Is(err, checkpoint.ErrNoPast) {
		t.Fatalf("fork at a round never committed: %v", err)
	}
}

// What any round changed comes from the store's pasts once the node's own
// kept changes are gone (another node ran it, or it is too old).
func TestChangesOfAnyRoundFromTheStore(t *testing.T) {
	eng, _, _ := travelled(t)
	os.RemoveAll(eng.changesRoot("a"))
	round, changes, err := eng.Changes(t.Context(), "a", 3)
	if err != nil || round != 3 || len(changes) != 1 {
		t.Fatalf("round 3: %d, %+v, %v", round, changes, err)
	}
	c := changes[0]
	if tx := texts(t, c); c.Path != "notes.txt" || c.Op != "write" || string(tx[0]) != "one" || string(tx[1]) != "two" {
		t.Fatalf("round 3's change: %+v", c)
	}
	if round, _, err := eng.Changes(t.Context(), "a", 0); err != nil || round != 5 {
		t.Fatalf("last change: round %d, %v", round, err)
	}
	msgs, st, err := RoundMessages(t.Context(), eng.Store(), "a", 3)
	if err != nil || len(msgs) != 3 || st.Round != 3 || msgs[0].Role != conversation.RoleUser {
		t.Fatalf("round 3's messages: %+v, %v", msgs, err)
	}
	// Undo needs what the node that ran round 5 kept; this one says so
	// (regression: it said no round had changed a file).
	if _, err := eng.Undo(t.Context(), "a"); !errors.Is(err, ErrNoChanges) || !strings.Contains(err.Error(), "round 5 changed files") {
		t.Fatalf("undo without the node's kept changes: %v", err)
	}
}

// pastLostWithItsProcess runs agent "a" one round (its max_rounds), which
// writes notes.txt, then cuts round 1's frame from its past file, as a
// kill between the round's commit and the keeping of its past leaves it.
func pastLostWithItsProcess(t *testing.T) (*Engine, checkpoint.Store) {
	t.Helper()
	eng, store := fileEngine(t)
	af := agentIn(t, `
name: one
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
limits: {max_rounds: 1}
`, forkScript)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"})
	if err != nil || res.Status != StatusPaused || res.Rounds != 1 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	name := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", "a", "past")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	first := 9 + (int(data[0]) | int(data[1])<<8 | int(data[2])<<16)
	if err := os.WriteFile(name, data[:first], 0o600); err != nil {
		t.Fatal(err)
	}
	return eng, store
}

// Regression: a process killed between a round's commit and the keeping of
// its past left the boundary with none, and a resume on another node was
// refused. The round's changes are taken from the file pool, and the
// workspace comes out whole.
func TestResumeRepairsAPastLostWithItsProcess(t *testing.T) {
	eng, _ := pastLostWithItsProcess(t)
	elsewhere := filepath.Join(t.TempDir(), "node-b")
	_, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Workspace: elsewhere, Strategy: StrategyManual})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Workspace: elsewhere}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, elsewhere, "notes.txt"); got != "one" {
		t.Fatalf("notes.txt on node B after the repair: %q", got)
	}
}

// Regression: an agent whose newest past a kill lost was exported without
// the blobs of what its last round wrote, so the import could not be
// resumed on another node, and the failed resume left a repaired past that
// named the missing blob. The export now carries them; an import that
// still lacks one is refused before anything is written.
func TestExportAfterALostPastResumesElsewhere(t *testing.T) {
	_, store := pastLostWithItsProcess(t)
	archive, err := checkpoint.Export(store, "a")
	if err != nil {
		t.Fatal(err)
	}
	imported := func() (*Engine, *checkpoint.FileStore) {
		dst, err := checkpoint.OpenFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if err := checkpoint.Import(dst, archive, checkpoint.ThisProcess("import")); err != nil {
			t.Fatal(err)
		}
		e, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: dst})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		return e, dst
	}
	nodeB, _ := imported()
	elsewhere := filepath.Join(t.TempDir(), "node-b")
	if _, err := nodeB.Resume(context.Background(), ResumeOptions{ID: "a", Workspace: elsewhere}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, elsewhere, "notes.txt"); got != "one" {
		t.Fatalf("notes.txt on node B: %q", got)
	}

	nodeC, dst := imported()
	for _, d := range checkpoint.BoundaryWrites(mustRead(t, dst, "a")) {
		if err := os.Remove(filepath.Join(dst.Dir(), "blobs", "sha256", strings.TrimPrefix(d, "sha256:"))); err != nil {
			t.Fatal(err)
		}
	}
	pastBefore, _ := os.ReadFile(filepath.Join(dst.Dir(), "agents", "a", "past"))
	_, err = nodeC.Resume(context.Background(), ResumeOptions{ID: "a", Workspace: filepath.Join(t.TempDir(), "node-c")})
	if err == nil || !strings.Contains(err.Error(), "the store lacks what round 1 wrote") || errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("resume with a blob missing: %v", err)
	}
	if pastAfter, _ := os.ReadFile(filepath.Join(dst.Dir(), "agents", "a", "past")); !bytes.Equal(pastBefore, pastAfter) {
		t.Fatal("the refused resume wrote a past")
	}
}

// mustRead reads agent id's boundary state from store.
func mustRead(t *testing.T, store checkpoint.Store, id string) *checkpoint.State {
	t.Helper()
	rec, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.State
}

// An undo, like any change made outside the agent, reaches the store's copy
// of the workspace with the next round: a resume elsewhere after it finds
// the workspace as undone, not as the agent last left it.
func TestUndoTravelsWithTheNextRound(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: undone
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, `
turns:
  - tool_calls: [{name: write_file, input: {path: notes.txt, content: one}}]
  - text: wrote one
  - text: seen
`)
	ws := af.WorkspaceDir()
	if err := os.WriteFile(filepath.Join(ws, "seed.txt"), []byte("seed"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, prompt := range []string{"write", "look again"} {
		if i == 1 {
			if _, err := eng.Undo(t.Context(), "u"); err != nil {
				t.Fatal(err)
			}
		}
		if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "u", Prompt: prompt}); err != nil || res.Status != StatusDone {
			t.Fatalf("run %d: %+v, %v", i, res, err)
		}
	}
	elsewhere := filepath.Join(t.TempDir(), "node-b")
	if _, err := eng.Resume(t.Context(), ResumeOptions{ID: "u", Workspace: elsewhere}); err != nil {
		t.Fatal(err)
	}
	if got, want := dirTree(t, elsewhere), dirTree(t, ws); !maps.Equal(got, want) || len(got) != 1 {
		t.Fatalf("the store's copy differs from the undone workspace:\n got %v\nwant %v", got, want)
	}
}

// limitedEngine is an engine on a new file store whose runs copy the
// workspace into the store within limit.
func limitedEngine(t *testing.T, limit WorkspaceLimit) *Engine {
	t.Helper()
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store, WorkspaceLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng
}

// A workspace past the limit of what the store keeps is refused before a
// round runs, saying the limit as it was given (a limit under a MiB once
// read "0 MiB"); with the copy off, a fork at a past round says the copy
// was off (it once blamed an older cairn).
func TestWorkspaceLimitMessages(t *testing.T) {
	const agent = "name: wl\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n"
	af := agentIn(t, agent, forkScript)
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "big.txt"), make([]byte, 2048), 0o640); err != nil {
		t.Fatal(err)
	}
	eng := limitedEngine(t, WorkspaceLimit{Files: 100, Bytes: 1 << 10})
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"})
	if !errors.Is(err, ErrWorkspaceTooLarge) || !strings.Contains(err.Error(), "more than 100 files or 1KiB") {
		t.Fatalf("over the limit: %v", err)
	}

	eng = limitedEngine(t, WorkspaceLimit{Off: true})
	for range 2 {
		if res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"}); err != nil || res.Status != StatusDone {
			t.Fatalf("run with the copy off: %+v, %v", res, err)
		}
	}
	_, err = eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: 1, As: "f1", Workspace: filepath.Join(t.TempDir(), "ws")})
	if !errors.Is(err, checkpoint.ErrNoPast) || !strings.Contains(err.Error(), "--workspace-limit off") {
		t.Fatalf("fork at a past round with the copy off: %v", err)
	}
}
