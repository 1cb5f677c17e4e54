package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: the store's copy of a workspace took each file's size and
// permissions as it listed the workspace, and its content as it read the
// file after. A file another agent's call replaced in between (a sibling
// sub-agent, a workflow's parallel step) was kept with the new content and
// the old size and mode, and the round's past, `cairn diff` and a
// workspace rebuilt from the store said the file was what it never was.
func TestWorkspaceCopyKeepsAReplacedFileAsItRead(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(p, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := scanWorkspace(ws, WorkspaceLimit{Files: 100, Bytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What Apply does: a new file renamed over the old one.
	tmp := filepath.Join(ws, ".cairn-apply-0123456789abcdef")
	replaced := []byte("a much longer second version")
	if err := os.WriteFile(tmp, replaced, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	store := checkpoint.NewMemStore()
	if entries, err = putContents(store, ws, entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("entries %+v", entries)
	}
	e := entries[0]
	data, err := store.Blob(e.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(replaced) || e.Size != int64(len(data)) || os.FileMode(e.Mode) != 0o644 {
		t.Errorf("kept %q as %d bytes, mode %v; want %d bytes, mode -rw-r--r--", data, e.Size, os.FileMode(e.Mode), len(data))
	}
}
