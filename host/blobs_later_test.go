package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// orderStore and orderLog note, in order, the blobs written and the
// commits made.
type orderStore struct {
	checkpoint.Store
	mu   *sync.Mutex
	seen *[]string
}

func (s orderStore) PutBlob(data []byte) (string, error) {
	s.mu.Lock()
	*s.seen = append(*s.seen, "blob "+string(data))
	s.mu.Unlock()
	return s.Store.PutBlob(data)
}

type orderLog struct {
	checkpoint.Log
	mu   *sync.Mutex
	seen *[]string
}

func (l orderLog) Commit(...checkpoint.Record) (int64, error) {
	l.mu.Lock()
	*l.seen = append(*l.seen, "commit")
	l.mu.Unlock()
	return 0, nil
}

func (l orderLog) Close() error { return nil }

// A new agent's first commit comes after its module blobs are written,
// whether or not its first request started them.
func TestModuleBlobsWrittenBeforeFirstCommit(t *testing.T) {
	for _, started := range []bool{false, true} {
		var mu sync.Mutex
		var seen []string
		w := newBlobWrites(orderStore{Store: checkpoint.NewMemStore(), mu: &mu, seen: &seen})
		w.put(inMemory([]byte("a")), digestOf([]byte("a")))
		w.put(inMemory([]byte("b")), digestOf([]byte("b")))
		if started {
			w.start()
		}
		log := &afterBlobs{Log: orderLog{mu: &mu, seen: &seen}, writes: w}
		if _, err := log.Commit(checkpoint.Record{}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(seen, ", "); got != "blob a, blob b, commit" {
			t.Fatalf("started %v: %s", started, got)
		}
	}
}

// failStore fails every PutBlob.
type failStore struct{ checkpoint.Store }

func (failStore) PutBlob([]byte) (string, error) { return "", errors.New("disk full") }

// A module blob that cannot be written fails the commit that would rely
// on it, and the journal's close.
func TestModuleBlobWriteFailsCommit(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	w := newBlobWrites(failStore{checkpoint.NewMemStore()})
	w.put(inMemory([]byte("a")), digestOf([]byte("a")))
	log := &afterBlobs{Log: orderLog{mu: &mu, seen: &seen}, writes: w}
	if _, err := log.Commit(checkpoint.Record{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("commit: %v", err)
	}
	if len(seen) != 0 {
		t.Fatalf("committed: %v", seen)
	}
	if err := log.Close(); err == nil {
		t.Fatal("close hid the failed write")
	}
}

// Regression for the crash window of the background write: an agent
// whose definition names module blobs the store lacks is rebuilt from
// the modules where its agent file finds them, which are stored again,
// while they still have those digests; not once one changed.
func TestModuleBlobMissingRebuiltFromItsFile(t *testing.T) {
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
	for _, digest := range def.Modules {
		if err := os.Remove(filepath.Join(blobs, strings.Replace(digest, ":", string(filepath.Separator), 1))); err != nil {
			t.Fatalf("the run did not store module %s: %v", digest, err)
		}
	}
	if _, _, err := eng.rebuild(def); err != nil {
		t.Fatalf("rebuild without the module blobs: %v", err)
	}
	for name, digest := range def.Modules {
		if _, err := store.Blob(digest); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("rebuilding, which only reads, stored module %s: %v", name, err)
		}
	}
	// A run that writes the agent stores them again, from their files.
	if _, err := eng.Run(context.Background(), RunOptions{ID: "m", Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	for name, digest := range def.Modules {
		if _, err := store.Blob(digest); err != nil {
			t.Fatalf("module %s was not stored again: %v", name, err)
		}
	}

	os.Remove(filepath.Join(blobs, strings.Replace(def.Modules["stats.wasm"], ":", string(filepath.Separator), 1)))
	if err := os.WriteFile(af.resolve("stats.wasm"), append(stats, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.rebuild(def); !errors.Is(err, ErrDefinition) || !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("rebuild from a module file that changed: %v", err)
	}
}

// Regression: once rebuilding only read, a resume after a crash that kept
// the module blobs from the store no longer stored them, so the agent's
// export and verify would lack them. A resume that writes the agent stores
// them again; a manual one reports and changes nothing.
func TestResumeStoresTheModulesACrashKeptFromTheStore(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, "name: m\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns: [{text: done}]\n")
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "m", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Read("m")
	if err != nil {
		t.Fatal(err)
	}
	blobs := filepath.Join(store.(*checkpoint.FileStore).Dir(), "blobs")
	for _, digest := range rec.State.Definition.Modules {
		if err := os.Remove(filepath.Join(blobs, strings.Replace(digest, ":", string(filepath.Separator), 1))); err != nil {
			t.Fatal(err)
		}
	}
	missing := func() (n int) {
		for _, digest := range rec.State.Definition.Modules {
			if _, err := store.Blob(digest); errors.Is(err, checkpoint.ErrNotFound) {
				n++
			}
		}
		return n
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "m", Strategy: StrategyManual}); err != nil {
		t.Fatal(err)
	}
	if n := missing(); n != len(rec.State.Definition.Modules) {
		t.Fatalf("a manual resume stored %d modules", len(rec.State.Definition.Modules)-n)
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "m"}); err != nil {
		t.Fatal(err)
	}
	if n := missing(); n != 0 {
		t.Fatalf("after a resume, %d modules are still missing from the store", n)
	}
}
