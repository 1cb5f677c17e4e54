package dirtree

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A tree of a file, a directory, a file in it and a symlink reads back as
// each is named.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "d"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "d", "b.txt"), []byte("beta"), 0o644))
	must(os.Symlink("a.txt", filepath.Join(dir, "link")))
	got, err := Read(dir)
	must(err)
	want := map[string]string{"a.txt": "alpha", "d/": "", "d/b.txt": "beta", "link": "-> a.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := Read(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing directory read without an error")
	}
}
