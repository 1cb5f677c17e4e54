package lockfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A file is named by its path until it is removed, or another file takes
// its name.
func TestNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mark")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !Names(path, f) {
		t.Fatal("a file just made is not named by its path")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if Names(path, f) {
		t.Fatal("a removed file is named by its old path")
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if Names(path, f) {
		t.Fatal("a file whose name another took is named by it")
	}
}
