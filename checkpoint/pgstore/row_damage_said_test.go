package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a row of cairn_bookmarks or cairn_memory that does not
// decode was reported as a file — "bookmark of agent a1 is corrupt at
// offset 0 …; restore the file from a backup or move the agent aside" —
// naming neither the table nor the row, with advice no database can
// follow. It is reported as a row of its table, by its key, with what
// deleting it costs.
func TestDamagedBookmarkAndMemoryRowsAreSaidAsRows(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 1)
	rec, err := s.Read("a1")
	must(t, err)
	must(t, s.PutBookmark("a1", checkpoint.Bookmark{Label: "before-deploy", Time: t0, State: rec.State}))
	must(t, s.Remember("team", checkpoint.Fact{Key: "region", Text: "eu-west-1", Time: t0}))
	execSQL(t, url, `UPDATE cairn_bookmarks SET data = '\xff00ff'::bytea`)
	execSQL(t, url, `UPDATE cairn_memory SET data = '\xff00ff'::bytea`)

	_, err = s.Bookmarks("a1")
	said(t, err, "cairn_bookmarks", "before-deploy", `agent "a1"`, "DELETE FROM cairn_bookmarks", "backup of the database")
	_, err = s.Recall("team")
	said(t, err, "cairn_memory", "region", "team", "DELETE FROM cairn_memory", "backup of the database")
}

func said(t *testing.T, err error, want ...string) {
	t.Helper()
	if !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("read of a damaged row: %v, want ErrCorrupt", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q: %v", w, err)
		}
	}
	for _, w := range []string{"offset", "the file"} {
		if strings.Contains(err.Error(), w) {
			t.Errorf("the error speaks of a file (%q): %v", w, err)
		}
	}
}
