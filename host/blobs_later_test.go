package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	b := newBlobless(t)
	eng, store, def := b.eng, b.store, b.def
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

	os.Remove(b.blobFile(def.Modules["stats.wasm"]))
	if err := os.WriteFile(b.af.resolve("stats.wasm"), append(b.stats, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.rebuild(def); !errors.Is(err, ErrDefinition) || !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("rebuild from a module file that changed: %v", err)
	}
}

// blobless is an agent of the built-in tools and the example's textstats
// (stats.wasm beside its agent file), run to its end, whose module blobs
// were then removed from the store, as a crash before their background
// write ended leaves them (blobs_later.go).
type blobless struct {
	eng   *Engine
	store checkpoint.Store
	af    *AgentFile
	def   checkpoint.Definition
	stats []byte // stats.wasm as the agent ran it
}

func newBlobless(t *testing.T) blobless {
	t.Helper()
	b := newModuleAgent(t)
	for _, digest := range b.def.Modules {
		if err := os.Remove(b.blobFile(digest)); err != nil {
			t.Fatalf("the run did not store module %s: %v", digest, err)
		}
	}
	return b
}

// newModuleAgent is agent m of a file store, with the built-in module and
// stats.wasm, after one run.
func newModuleAgent(t *testing.T) blobless {
	t.Helper()
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
	return blobless{eng: eng, store: store, af: af, def: rec.State.Definition, stats: stats}
}

// blobFile is where the store keeps the blob digest.
func (b blobless) blobFile(digest string) string {
	blobs := filepath.Join(b.store.(*checkpoint.FileStore).Dir(), "blobs")
	return filepath.Join(blobs, strings.Replace(digest, ":", string(filepath.Separator), 1))
}

// Regression: once rebuilding only read, a resume after a crash that kept
// the module blobs from the store no longer stored them, so the agent's
// export and verify would lack them. A resume that writes the agent stores
// them again; a manual one reports and changes nothing.
func TestResumeStoresTheModulesACrashKeptFromTheStore(t *testing.T) {
	b := newBlobless(t)
	eng, store, def := b.eng, b.store, b.def
	missing := func() (n int) {
		for _, digest := range def.Modules {
			if _, err := store.Blob(digest); errors.Is(err, checkpoint.ErrNotFound) {
				n++
			}
		}
		return n
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "m", Strategy: StrategyManual}); err != nil {
		t.Fatal(err)
	}
	if n := missing(); n != len(def.Modules) {
		t.Fatalf("a manual resume stored %d modules", len(def.Modules)-n)
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "m"}); err != nil {
		t.Fatal(err)
	}
	if n := missing(); n != 0 {
		t.Fatalf("after a resume, %d modules are still missing from the store", n)
	}
}

// Regression: a module blob damaged in the store (its content no longer
// its digest) was not repaired by a run: rebuilding the agent failed on
// it, though the module's source (built into cairn, or its file) still
// had the bytes, and a new agent of the same module left it as it was (it
// asks the store only whether the blob is there). Rebuilding takes the
// module from its source when its bytes have the digest; a resume that
// writes the agent stores it again and says so; a manual one changes
// nothing. A module whose file changed since still fails, saying so.
func TestDamagedModuleBlobStoredAgainFromItsSource(t *testing.T) {
	b := newModuleAgent(t)
	eng, store, af, def := b.eng, b.store, b.af, b.def
	damage := func() {
		for _, digest := range def.Modules {
			f, err := os.OpenFile(b.blobFile(digest), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte("damage"), 100)
			f.Close()
		}
	}
	damaged := func() (n int) {
		for _, digest := range def.Modules {
			if _, err := store.Blob(digest); errors.Is(err, checkpoint.ErrCorrupt) {
				n++
			}
		}
		return n
	}
	damage()
	var warnings []string
	onEvent := func(e Event) {
		if e.Type == EventWarning {
			warnings = append(warnings, e.Text)
		}
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "m", Strategy: StrategyManual}); err != nil {
		t.Fatalf("a manual resume with damaged module blobs: %v", err)
	}
	if n := damaged(); n != len(def.Modules) {
		t.Fatalf("a manual resume repaired %d modules", len(def.Modules)-n)
	}
	if _, err := eng.Resume(context.Background(), ResumeOptions{ID: "m", OnEvent: onEvent}); err != nil {
		t.Fatalf("a resume with damaged module blobs: %v", err)
	}
	if n := damaged(); n != 0 {
		t.Fatalf("after a resume, %d module blobs are still damaged", n)
	}
	for _, name := range []string{"builtin", "stats.wasm"} {
		if !slices.ContainsFunc(warnings, func(w string) bool {
			return strings.Contains(w, "module "+name) && strings.Contains(w, "damaged") && strings.Contains(w, "stored again")
		}) {
			t.Errorf("no warning says module %s was damaged and stored again: %q", name, warnings)
		}
	}

	damage()
	if err := os.WriteFile(af.resolve("stats.wasm"), append(b.stats, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := eng.Resume(context.Background(), ResumeOptions{ID: "m"})
	if !errors.Is(err, checkpoint.ErrCorrupt) || !errors.Is(err, ErrModuleFileChanged) {
		t.Fatalf("a resume with a damaged blob of a module whose file changed: %v", err)
	}
}
