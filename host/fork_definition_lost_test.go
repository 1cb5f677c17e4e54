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

// collectAfterRead is a file store that collects itself, as a gc started
// by someone else would, just after the first blob a fork reads: the
// workspace of the bookmark it forks.
type collectAfterRead struct {
	*checkpoint.FileStore
	keep checkpoint.Retention

	once sync.Once
	got  *checkpoint.Collected
	err  error
}

func (s *collectAfterRead) Blob(digest string) ([]byte, error) {
	b, err := s.FileStore.Blob(digest)
	s.once.Do(func() { s.got, s.err = s.FileStore.Collect(s.keep) })
	return b, err
}

// bookmarkOfAnOldAgentFile makes agent "marked" with bookmark "old",
// whose agent file, stored in no other place, is one the agent has since
// changed, and bookmark "new"; it returns the old agent file's digest.
func bookmarkOfAnOldAgentFile(t *testing.T, eng *Engine, store checkpoint.Store) string {
	t.Helper()
	af := agentIn(t, poolAgent, "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: one}}]\n  - text: done\n")
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "marked", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	b, err := eng.Snapshot(t.Context(), "marked", "old")
	if err != nil {
		t.Fatal(err)
	}
	old, err := store.PutBlob([]byte(poolAgent + "# as it was before\n"))
	if err != nil {
		t.Fatal(err)
	}
	b.State.Definition.AgentFile = old
	if err := store.PutBookmark("marked", *b); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // the bookmarks' times differ
	if _, err := eng.Snapshot(t.Context(), "marked", "new"); err != nil {
		t.Fatal(err)
	}
	return old
}

// Regression: a fork copies its source's definition, the digests of its
// agent file, script and modules, and never checked that the store still
// keeps their blobs. A bookmark whose agent file only it named, lost from
// the store or removed by a gc with Retention.Bookmarks while the fork
// read the bookmark (after its workspace), was forked into an agent whose
// first run failed with blob not found. The fork refuses before it makes
// anything: as a bookmark removed while it read it, or naming the blob
// lost and what to do. A tool module its source still has is stored
// again instead.
func TestForkOfASourceWhoseDefinitionBlobIsGoneIsRefusedBeforeItMakesAnything(t *testing.T) {
	t.Run("removed by gc meanwhile", func(t *testing.T) {
		fs, err := checkpoint.OpenFileStore(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		s := &collectAfterRead{FileStore: fs, keep: checkpoint.Retention{Bookmarks: 1, BlobGrace: time.Nanosecond}}
		eng, err := NewEngine(t.Context(), Config{Store: s, CacheDir: testCache})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close(t.Context())
		s.once.Do(func() {}) // no gc while the agent is made
		old := bookmarkOfAnOldAgentFile(t, eng, fs)
		s.once = sync.Once{}
		ws := filepath.Join(t.TempDir(), "ws")
		_, err = eng.Fork(t.Context(), ForkOptions{ID: "marked", From: "old", As: "f1", Workspace: ws})
		if s.err != nil || s.got == nil || !strings.Contains(strings.Join(s.got.Files, " "), strings.TrimPrefix(old, "sha256:")) {
			t.Fatalf("gc did not remove the old agent file: %+v, %v", s.got, s.err)
		}
		if !errors.Is(err, ErrNoBookmark) || !strings.Contains(err.Error(), "removed while the fork read it") {
			t.Fatalf("fork from a bookmark gc removed meanwhile: %v", err)
		}
		if fs.Exists("f1") {
			t.Error("the refused fork made agent f1")
		}
		if _, err := os.Stat(ws); !os.IsNotExist(err) {
			t.Errorf("the refused fork left its workspace: %v", err)
		}
	})
	t.Run("lost", func(t *testing.T) {
		eng, store := fileEngine(t)
		old := bookmarkOfAnOldAgentFile(t, eng, store)
		dir := store.(interface{ Dir() string }).Dir()
		if err := os.Remove(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(old, "sha256:"))); err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(t.TempDir(), "ws")
		_, err := eng.Fork(t.Context(), ForkOptions{ID: "marked", From: "old", As: "f1", Workspace: ws})
		if !errors.Is(err, ErrDefinitionLost) || errors.Is(err, checkpoint.ErrNotFound) || !strings.Contains(err.Error(), "the agent file of bookmark \"old\" (blob "+old+")") ||
			!strings.Contains(err.Error(), "restore the store's blobs from a backup") {
			t.Fatalf("fork of a bookmark whose agent file is lost: %v", err)
		}
		if store.Exists("f1") {
			t.Error("the refused fork made agent f1")
		}
		if _, err := os.Stat(ws); !os.IsNotExist(err) {
			t.Errorf("the refused fork left its workspace: %v", err)
		}
		// A tool module whose blob is lost and whose source still has its
		// bytes is stored again, as a run of the agent would: the fork runs.
		marks, err := store.Bookmarks("marked")
		if err != nil || len(marks) != 2 {
			t.Fatalf("bookmarks: %+v, %v", marks, err)
		}
		mod := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(marks[1].State.Definition.Modules["builtin"], "sha256:"))
		if err := os.Remove(mod); err != nil {
			t.Fatal(err)
		}
		if f, err := eng.Fork(t.Context(), ForkOptions{ID: "marked", From: "new", As: "f2"}); err != nil {
			t.Fatalf("fork of bookmark new: %+v, %v", f, err)
		}
		if _, err := os.Stat(mod); err != nil {
			t.Fatalf("the builtin module's blob was not stored again: %v", err)
		}
	})
}
