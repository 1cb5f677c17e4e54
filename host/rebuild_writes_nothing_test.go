package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	eng, store := fileEngine(t)
	af := agentIn(t, "name: m\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}, {module: stats.wasm, grant: {workspace: ro}}]\n",
		"turns: [{text: done}]\n")
	stats, err := os.ReadFile(filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(af.resolve("stats.wasm"), stats, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "m", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Read("m")
	if err != nil {
		t.Fatal(err)
	}
	def := rec.State.Definition
	blobs := filepath.Join(store.(*checkpoint.FileStore).Dir(), "blobs")
	blobFile := func(digest string) string {
		return filepath.Join(blobs, strings.Replace(digest, ":", string(filepath.Separator), 1))
	}
	for _, digest := range def.Modules {
		if err := os.Remove(blobFile(digest)); err != nil {
			t.Fatalf("the run did not store module %s: %v", digest, err)
		}
	}

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
	if err := os.WriteFile(af.resolve("stats.wasm"), append(stats, 0, 2, 1, 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = eng.rebuild(def)
	if !errors.Is(err, ErrDefinition) || !errors.Is(err, checkpoint.ErrNotFound) || !errors.Is(err, ErrModuleFileChanged) {
		t.Fatalf("rebuild from a module file that changed: %v", err)
	}
}
