package host

import (
	"errors"
	"os"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: rebuilding an agent whose module blobs a crash kept from
// the store (before their background write ended) stored them again, so
// a manual resume, which "reports and changes nothing", wrote to the
// store, and so did Ask. Rebuilding only reads: the modules come from
// their files, while those have the digests, and storeRebuilt stores them
// for a run that writes the agent. A file that changed since is
// ErrModuleFileChanged, which says what to do (resume with Upgrade).
func TestRebuildWritesNothing(t *testing.T) {
	b := newBlobless(t)
	eng, store, def, blobFile := b.eng, b.store, b.def, b.blobFile

	_, mods, err := eng.rebuild(def)
	if err != nil {
		t.Fatalf("rebuild without the module blobs: %v", err)
	}
	for name, digest := range def.Modules {
		if _, err := os.Stat(blobFile(digest)); err == nil {
			t.Fatalf("rebuilding stored module %s", name)
		}
	}
	if err := eng.storeRebuilt(def, mods); err != nil {
		t.Fatal(err)
	}
	for name, digest := range def.Modules {
		if _, err := store.Blob(digest); err != nil {
			t.Fatalf("module %s was not stored for the run: %v", name, err)
		}
	}

	if err := os.Remove(blobFile(def.Modules["stats.wasm"])); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.af.resolve("stats.wasm"), append(b.stats, 0, 2, 1, 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = eng.rebuild(def)
	if !errors.Is(err, ErrDefinition) || !errors.Is(err, checkpoint.ErrNotFound) || !errors.Is(err, ErrModuleFileChanged) {
		t.Fatalf("rebuild from a module file that changed: %v", err)
	}
}
