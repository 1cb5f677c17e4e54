package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: cairn import given a directory failed with exit 1 as if
// the import had failed ("read export: read DIR: is a directory"), where
// any other wrong FILE is refused as a wrong command line. It is refused
// with exit 2, saying what to give, and the store is not made.
func TestImportOfADirectoryIsRefused(t *testing.T) {
	dir, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	code, _, errOut := cairn(t, "import", "--store", store, dir)
	if code != exitUsage || !strings.Contains(errOut, dir+" is a directory: give the file `cairn export` wrote") {
		t.Errorf("import of a directory: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("the refused import made the store: %v", err)
	}
}
