package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A fill's mark is swept only once no process holds it: while its fill is
// under way it is not named; let go with what it filled left, it is named,
// and dropped once the sweep says what it names is gone; let go with
// nothing left, it is gone. A temp file a killed MarkFill left is removed
// without a sweep, and a dry run names marks and removes none.
func TestFillMarksAreSweptOnceNoProcessHoldsThem(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	left := func(dryRun bool, result error) []string {
		var dirs []string
		if err := s.LeftFills(func(m FillMark) error { dirs = append(dirs, m.Dir); return result }, dryRun); err != nil {
			t.Fatal(err)
		}
		slices.Sort(dirs)
		return dirs
	}
	live, err := s.MarkFill(FillMark{Dir: "/w/live"})
	if err != nil {
		t.Fatal(err)
	}
	killed, err := s.MarkFill(FillMark{Dir: "/w/killed"})
	if err != nil {
		t.Fatal(err)
	}
	done, err := s.MarkFill(FillMark{Dir: "/w/done"})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(killed(true), done(false)); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(s.Dir(), fillsDir, "123.tmp")
	if err := os.WriteFile(tmp, []byte(`{"dir":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := left(true, nil); !slices.Equal(got, []string{"/w/killed"}) {
		t.Fatalf("a dry run sweeps %v; want the killed fill's", got)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a dry run removed a temp mark: %v", err)
	}
	if got := left(false, os.ErrExist); !slices.Equal(got, []string{"/w/killed"}) {
		t.Fatalf("a sweep sweeps %v; want the killed fill's", got)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("a sweep left a temp mark no process holds: %v", err)
	}
	if got := left(false, nil); !slices.Equal(got, []string{"/w/killed"}) {
		t.Fatalf("a sweep after one that failed sweeps %v; want the killed fill's again", got)
	}
	if got := left(false, nil); len(got) != 0 {
		t.Fatalf("a sweep after the mark was dropped sweeps %v; want none", got)
	}
	if err := live(false); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(s.Dir(), fillsDir)); len(entries) != 0 {
		t.Fatalf("once every fill let go, fills/ holds %d entries", len(entries))
	}
}
