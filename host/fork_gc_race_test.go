package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// collectMidRead is a file store that collects itself, as a gc started by
// someone else would, just before the first blob a fork reads.
type collectMidRead struct {
	*checkpoint.FileStore
	keep checkpoint.Retention

	once sync.Once
	got  *checkpoint.Collected
	err  error
}

func (s *collectMidRead) Blob(digest string) ([]byte, error) {
	s.once.Do(func() { s.got, s.err = s.FileStore.Collect(s.keep) })
	return s.FileStore.Blob(digest)
}

// Regression: Engine.Fork from a bookmark reads the agent's bookmarks
// without its lock, then the blob of the bookmark's workspace; a gc with
// Retention.Bookmarks that removed the bookmark and its blob meanwhile
// failed the fork with "blob … not found" (checkpoint.ErrNotFound, which
// the HTTP API answers 404 as an unknown agent). The fork refuses the
// bookmark as removed while it read it, naming those left
// (ErrNoBookmark), whoever calls it, and makes nothing.
func TestForkFromABookmarkGCRemovesMeanwhileIsRefusedAsRemoved(t *testing.T) {
	af := agentIn(t, poolAgent, "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: one}}]\n  - text: done\n")
	dir := t.TempDir()
	fs, err := checkpoint.OpenFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &collectMidRead{FileStore: fs, keep: checkpoint.Retention{Bookmarks: 1, BlobGrace: time.Nanosecond}}
	eng, err := NewEngine(t.Context(), Config{Store: s, CacheDir: testCache})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(t.Context())
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "marked", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if _, err := eng.Snapshot(t.Context(), "marked", "old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "b.txt"), []byte("later"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the bookmarks' times differ
	if _, err := eng.Snapshot(t.Context(), "marked", "new"); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	_, err = eng.Fork(t.Context(), ForkOptions{ID: "marked", From: "old", As: "f1", Workspace: ws})
	if s.err != nil || s.got == nil || !strings.Contains(strings.Join(s.got.Files, " "), filepath.Join("bookmarks", "old.cbor")) {
		t.Fatalf("gc did not remove bookmark old: %+v, %v", s.got, s.err)
	}
	if !errors.Is(err, ErrNoBookmark) || errors.Is(err, checkpoint.ErrNotFound) || !strings.Contains(err.Error(), "removed while the fork read it") ||
		!strings.Contains(err.Error(), "bookmarks left: new") {
		t.Fatalf("fork from a bookmark gc removed meanwhile: %v", err)
	}
	if fs.Exists("f1") {
		t.Error("the refused fork made agent f1")
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("the refused fork left its workspace: %v", err)
	}
}
