package checkpoint

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// syncedWhile returns the paths synced while f runs.
func syncedWhile(f func()) []string {
	var mu sync.Mutex
	var paths []string
	stop := syncpoint.Observe(func(p string) {
		mu.Lock()
		paths = append(paths, p)
		mu.Unlock()
	})
	f()
	stop()
	return paths
}

// A new store's directories are synced as they are made; an agent's
// creation syncs the directory of agents, the one that gained an entry,
// and not the store's again.
func TestStoreDirsSyncedWhenMade(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	var s *FileStore
	synced := syncedWhile(func() {
		var err error
		if s, err = OpenFileStore(dir); err != nil {
			t.Fatal(err)
		}
	})
	for _, want := range []string{dir, filepath.Join(dir, "blobs")} {
		if !slices.Contains(synced, want) {
			t.Errorf("opening a new store did not sync %s (synced %v)", want, synced)
		}
	}
	if again := syncedWhile(func() { OpenFileStore(dir) }); len(again) != 0 {
		t.Errorf("opening a store that exists synced %v", again)
	}

	l, err := s.Lock("a", ThisProcess("r"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	synced = syncedWhile(func() {
		log, err := s.Create("a", NewState("a", Definition{}, Labels{}, time.Unix(0, 0).UTC()))
		if err != nil {
			t.Fatal(err)
		}
		log.Close()
	})
	if !slices.Contains(synced, filepath.Join(dir, "agents")) {
		t.Errorf("creating an agent did not sync the directory of agents (synced %v)", synced)
	}
	if slices.Contains(synced, dir) {
		t.Errorf("creating an agent synced the store's directory again")
	}
}
