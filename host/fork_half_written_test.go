package host

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a fork whose workspace could not be read whole from the
// store (a blob read failing midway) said nothing was changed but left
// the files it had written, so that the retry was refused ("exists and is
// not empty"). What a failed fill wrote is now removed: the directories
// the fork made for the workspace, or, in an empty directory the user
// had, what was put in it, never that directory. A resume into an empty
// directory elsewhere does the same.
func TestFailedForkLeavesNoHalfWrittenWorkspace(t *testing.T) {
	eng, store, _ := travelled(t)
	// seed.txt is the last of the workspace's files (more.txt, notes.txt,
	// seed.txt): the fill has written the others when its read fails.
	blob := filepath.Join(store.(*checkpoint.FileStore).Dir(), "blobs", "sha256", digestHex(t, store, "seed"))
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(blob); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(t.TempDir(), "made")
	made := filepath.Join(parent, "ws")
	had := t.TempDir()
	for i, ws := range []string{made, had} {
		_, err := eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: 6, As: "f", Workspace: ws})
		if !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("fork into %s with a blob gone: %v", ws, err)
		}
		if i == 0 {
			if _, err := os.Stat(parent); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the directories the fork made are left: %v", err)
			}
		} else if entries, err := os.ReadDir(had); err != nil || len(entries) != 0 {
			t.Fatalf("the directory the user had: %d entries, %v; want it there and empty", len(entries), err)
		}
	}
	elsewhere := filepath.Join(t.TempDir(), "node-b")
	if _, err := eng.Resume(t.Context(), ResumeOptions{ID: "a", Workspace: elsewhere}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("resume elsewhere with a blob gone: %v", err)
	}
	if _, err := os.Stat(elsewhere); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the resume left its workspace: %v", err)
	}
	if err := os.WriteFile(blob, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: 6, As: "f", Workspace: had}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if readFile(t, had, "seed.txt") != "seed" || readFile(t, had, "more.txt") != "three" {
		t.Fatal("the retry's workspace is not the round's")
	}
}

// digestHex is the hex of the digest the store gives content.
func digestHex(t *testing.T, store checkpoint.Store, content string) string {
	t.Helper()
	d, err := store.PutBlob([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	return d[len("sha256:"):]
}
