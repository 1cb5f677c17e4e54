package host

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// A workspace that sub-agents share is copied into the store while
// another agent's call applies its changes to it: the copy leaves out
// Apply's temporary files, and a file gone before the copy reads it.
// The team example failed with "open …/.cairn-apply-…: no such file or
// directory" when a sub-agent started as its sibling's call finished.
func TestWorkspaceCopyOfASharedWorkspaceSkipsWhatAnotherCallIsApplying(t *testing.T) {
	ws := t.TempDir()
	for name, data := range map[string]string{
		"kept.txt":                      "kept",
		".cairn-apply-4f74b24c8cd7466c": "half written",
		"sub/gone.txt":                  "removed by another call",
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	store := checkpoint.NewMemStore()
	entries, err := scanWorkspace(ws, WorkspaceLimit{Files: 100, Bytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "sub", "gone.txt")); err != nil {
		t.Fatal(err)
	}
	entries, err = putContents(store, ws, entries)
	if err != nil {
		t.Fatalf("copy of a workspace that lost a file: %v", err)
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
		if !e.Dir && e.Digest == "" {
			t.Errorf("%s kept without its content", e.Path)
		}
	}
	if want := []string{"kept.txt", "sub"}; !slices.Equal(paths, want) {
		t.Errorf("copied %q, want %q", paths, want)
	}
}
