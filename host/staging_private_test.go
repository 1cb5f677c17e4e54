package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: an agent of a store without a directory staged its calls'
// changes, and kept its rounds' changes for diff and undo, in
// cairn-staging-UID under the temp directory whatever that directory
// was: one that another user made first, writable by all or a link to
// a directory of theirs, was used as it was, so they could read the
// changes staged there, remove them, or put changes of their own in
// place of those undo restores. Such a directory is refused, naming it,
// and nothing is written in it.
func TestStagingRefusesADirectoryOthersCanWrite(t *testing.T) {
	for name, share := range map[string]func(t *testing.T, base string){
		"writable by all": func(t *testing.T, base string) {
			must(t, os.Chmod(base, 0o777))
		},
		"a link to a directory writable by all": func(t *testing.T, base string) {
			shared := filepath.Join(t.TempDir(), "shared")
			must(t, os.Rename(base, shared))
			must(t, os.Chmod(shared, 0o777))
			must(t, os.Symlink(shared, base))
		},
	} {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			base := filepath.Join(tmp, fmt.Sprintf("cairn-staging-%d", os.Getuid()))
			eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: checkpoint.NewMemStore()})
			must(t, err)
			defer eng.Close(context.Background())
			af := pauseAgent(t)
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "steps", Prompt: "go"})
			must(t, err)
			if res.Status != StatusDone {
				t.Fatalf("run: %+v", res)
			}
			share(t, base)
			before, _ := os.ReadDir(base)
			_, err = eng.Run(context.Background(), RunOptions{Agent: pauseAgent(t), ID: "other", Prompt: "go"})
			if err == nil || !strings.Contains(err.Error(), base) {
				t.Fatalf("run staging in %s: %v, want it refused naming the directory", base, err)
			}
			if after, _ := os.ReadDir(base); len(after) != len(before) {
				t.Errorf("the refused run wrote in %s: %d entries, then %d", base, len(before), len(after))
			}
			if _, _, err := eng.Changes(context.Background(), "steps", 0); err == nil || !strings.Contains(err.Error(), base) {
				t.Errorf("diff reading from %s: %v, want it refused naming the directory", base, err)
			}
		})
	}
}
