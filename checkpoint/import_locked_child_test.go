package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Regression: an import of a tree whose sub-agent's lock another process
// held (making an agent of that id) stored the top agent's blobs, made it
// and then removed it, on finding the lock, leaving its blobs for gc. The
// lock of every agent of the tree is now taken before anything is
// written: such an import is refused as locked, and the store holds
// nothing of it.
func TestImportOfATreeWhoseSubAgentIsLockedWritesNothing(t *testing.T) {
	a, err := Export(tree(t), "a1")
	must(t, err)
	dir := t.TempDir()
	dst, err := OpenFileStore(dir)
	must(t, err)
	other, err := OpenFileStore(dir) // another process's
	must(t, err)
	held, err := other.Lock("g1", ThisProcess("maker"))
	must(t, err)
	if err := Import(dst, a, ThisProcess("import")); !errors.Is(err, ErrLocked) {
		t.Fatalf("import with g1 locked: %v, want ErrLocked", err)
	}
	for _, id := range []string{"a1", "c1", "g1"} {
		if dst.Exists(id) {
			t.Errorf("the refused import made %s", id)
		}
	}
	if blobs, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256")); len(blobs) != 0 {
		t.Errorf("the refused import stored %d blobs", len(blobs))
	}
	held.Unlock()
	must(t, Import(dst, a, ThisProcess("import")))
}
