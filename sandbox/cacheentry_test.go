package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// cairn names the compile cache's file of a module as wazero does: a
// wazero upgrade that names them otherwise fails this test (and until it
// is fixed, a Runtime removes none of the cache's files of its version).
func TestEntryNameIsTheFileWazeroWrites(t *testing.T) {
	for _, closeOnDone := range []bool{false, true} {
		dir := t.TempDir()
		code := watBytes["start"]
		must(t, compileToCache(context.Background(), dir, code, runtimeKey{closeOnDone: closeOnDone}))
		name := entryName(code, closeOnDone)
		if !validEntry(name) {
			t.Fatalf("entryName gives %q, not a name it believes", name)
		}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			got, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
			t.Fatalf("closeOnDone %v: wazero wrote %q, not %s: %v", closeOnDone, got, name, err)
		}
	}
}
