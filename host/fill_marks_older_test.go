package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: the marks of fills of a PostgreSQL store moved out of the
// temp directory (cairn-staging-UID/<digest>/fills), which a reboot
// empties, to the user's state directory; what a fill an older cairn
// killed left, named by a mark in the old place that no reboot has
// removed, must still be found. A mark an older cairn wrote there, naming
// a fill's directory it left, has Collect remove that directory, and
// the mark with it; a fill now marks in the state directory alone.
func TestCollectReadsTheMarksOfFillsAnOlderCairnKeptInTheTempDirectory(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t) // its server's files where it keeps them
	t.Setenv("TMPDIR", t.TempDir())
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	store, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	if err := checkStagingOf(store); err != nil {
		t.Fatal(err)
	}
	older := filepath.Join(localRootOf(store), "fills")
	left := filepath.Join(t.TempDir(), ".cairn-fill-f-ws-0123456789ab")
	must(t, os.MkdirAll(filepath.Join(left, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(left, "sub", "a.txt"), []byte("half\n"), 0o644))
	release, err := checkpoint.NewMarkDir(older).MarkFill(checkpoint.FillMark{Dir: left})
	if err != nil {
		t.Fatal(err)
	}
	must(t, release(true)) // killed: its mark is left, held by none

	got, err := Collect(context.Background(), store, checkpoint.Retention{DryRun: true})
	if err != nil || !slices.Contains(got.Fills, left) {
		t.Fatalf("Collect --dry-run: %v, fills %v; want %s", err, got, left)
	}
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("a dry run removed %s: %v", left, err)
	}
	got, err = Collect(context.Background(), store, checkpoint.Retention{})
	if err != nil || !slices.Contains(got.Fills, left) {
		t.Fatalf("Collect: %v, fills %v; want %s", err, got, left)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("Collect left %s: %v", left, err)
	}
	if marks, _ := os.ReadDir(older); len(marks) != 0 {
		t.Errorf("Collect left %d marks in the old place", len(marks))
	}

	dir, err := fillMarksDir(store)
	if err != nil {
		t.Fatal(err)
	}
	release2, err := markFill(store, checkpoint.FillMark{Dir: filepath.Join(t.TempDir(), ".cairn-fill-g-ws-0123456789ab")})
	if err != nil {
		t.Fatal(err)
	}
	defer release2(false)
	if marks, _ := filepath.Glob(filepath.Join(dir, "*.fill")); len(marks) != 1 || !strings.HasPrefix(dir, state+string(filepath.Separator)) {
		t.Errorf("a fill's mark: %v in %s; want one, in %s", marks, dir, state)
	}
	if marks, _ := os.ReadDir(older); len(marks) != 0 {
		t.Errorf("a fill marked in the old place: %d marks there", len(marks))
	}
}
