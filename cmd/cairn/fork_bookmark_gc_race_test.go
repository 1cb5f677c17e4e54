package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// A fork from a bookmark reads the agent's bookmarks without its lock,
// then the blob of the bookmark's workspace; `cairn gc --keep-bookmarks`
// run meanwhile removes the oldest bookmarks and the blobs only they
// used. The fork then refuses the bookmark as one that was removed while
// it read it, naming gc and the bookmarks left, with exit 2: never "blob
// not found" for a bookmark that was there when it was asked for. Nothing
// of the refused fork is left; a bookmark gc kept forks.
func TestForkFromABookmarkGCKeepBookmarksRemovesMeanwhileSaysItWasRemoved(t *testing.T) {
	t.Parallel()
	agentFile, store := scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, roundsScript(3))
	if code, _, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	// Two bookmarks of two workspaces: the older one's is a blob only it
	// names.
	ws := filepath.Join(filepath.Dir(agentFile), "workspace")
	if code, _, errOut := cairnProcess(t, "snapshot", "--store", store, "--label", "old", "w"); code != exitDone {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	must(t, os.WriteFile(filepath.Join(ws, "extra.txt"), []byte("after the first bookmark"), 0o644))
	if code, _, errOut := cairnProcess(t, "snapshot", "--store", store, "--label", "new", "w"); code != exitDone {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}

	fork := func(t *testing.T, label string) (*host.Forked, string, *gcMidRead, error) {
		agedBlobs(t, store)
		fs, err := checkpoint.OpenFileStore(store)
		must(t, err)
		// gc runs just before the fork reads the bookmark's workspace.
		s := &gcMidRead{FileStore: fs, t: t, store: store, at: 1, args: []string{"--keep-bookmarks", "1"}}
		eng, err := host.NewEngine(context.Background(), host.Config{Store: s, CacheDir: cacheForTests(t)})
		must(t, err)
		defer eng.Close(context.Background())
		dir := filepath.Join(t.TempDir(), "ws")
		st, err := forkAt(context.Background(), eng, host.ForkOptions{ID: "w", From: label, Workspace: dir})
		return st, dir, s, err
	}

	t.Run("removed", func(t *testing.T) {
		_, dir, s, err := fork(t, "old")
		if !strings.Contains(s.gcOut, filepath.Join("bookmarks", "old.cbor")) {
			t.Fatalf("gc did not remove the bookmark: %s", s.gcOut)
		}
		if err == nil || !strings.Contains(err.Error(), `bookmark "old"`) || !strings.Contains(err.Error(), "removed while the fork read it") ||
			!strings.Contains(err.Error(), "`cairn gc --keep-bookmarks`") || !strings.Contains(err.Error(), "bookmarks left: new") ||
			strings.Contains(err.Error(), "blob") {
			t.Fatalf("fork from a bookmark gc removed meanwhile: %v", err)
		}
		if code := exitWith(forkError(err), io.Discard); code != exitUsage {
			t.Fatalf("exit %d for %v", code, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("the refused fork left its workspace: %v", err)
		}
	})
	t.Run("kept", func(t *testing.T) {
		st, dir, _, err := fork(t, "new")
		if err != nil {
			t.Fatalf("fork from the bookmark gc kept: %v", err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "extra.txt")); err != nil || string(got) != "after the first bookmark" || st.Label != "new" {
			t.Fatalf("fork from new: %+v, extra.txt %q %v", st, got, err)
		}
	})
	entries, err := os.ReadDir(filepath.Join(store, "agents"))
	must(t, err)
	if len(entries) != 2 {
		t.Fatalf("agents after the forks: %v", entries)
	}
}
