package pgstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: the writes that no lease fences — a blob (in one row or in
// chunks), a bookmark, a memory fact and its removal, a pause request and
// its clearing, a workflow record written without a lease, gc's removal
// of a blob — checked no schema version, so a store that opened the
// database before another node migrated it wrote rows the newer schema
// may not expect. Each is refused saying to upgrade, as a fenced write
// is, and the database keeps what it had.
func TestUnfencedWritesOnNewerSchemaRefused(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 1)
	must(t, s.Remember("ns", checkpoint.Fact{Key: "k", Text: "v"}))
	if _, err := s.PutBlob([]byte("unreferenced")); err != nil {
		t.Fatal(err)
	}
	must(t, s.RequestPause("a1"))
	execSQL(t, url, `UPDATE cairn_blobs SET stored = now() - interval '2 hours'`) // past gc's grace

	newer := pgstore.SchemaVersion() + 1
	execSQL(t, url, fmt.Sprintf(`UPDATE cairn_schema SET version = %d`, newer))
	before := dump(t, url)
	var blobsBefore string
	query(t, url, `SELECT string_agg(digest || ':' || stored::text, ' ' ORDER BY digest) FROM cairn_blobs`, nil, &blobsBefore)

	big := chunkedBlob()
	for _, c := range []struct {
		name  string
		write func() error
	}{
		{"a blob", func() error { _, err := s.PutBlob([]byte("new")); return err }},
		{"a blob stored again", func() error { _, err := s.PutBlob([]byte("unreferenced")); return err }},
		{"a chunked blob", func() error { _, err := s.PutBlob(big); return err }},
		{"a bookmark", func() error {
			return s.PutBookmark("a1", checkpoint.Bookmark{Label: "b1", Time: t0, Round: 1, State: newState("a1")})
		}},
		{"a memory fact", func() error { return s.Remember("ns", checkpoint.Fact{Key: "k2", Text: "v2"}) }},
		{"a memory fact's removal", func() error { return s.Forget("ns", "k") }},
		{"a pause request", func() error { return s.RequestPause("a1") }},
		{"a pause request's clearing", func() error { return s.ClearPause("a1") }},
		{"a workflow record", func() error {
			return s.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "w1", Name: "w1"})
		}},
		{"gc", func() error { _, err := s.Collect(checkpoint.Retention{}); return err }},
	} {
		err := c.write()
		var fe *checkpoint.FutureSchemaError
		if !errors.As(err, &fe) || fe.Version != newer || fe.Supported != pgstore.SchemaVersion() {
			t.Errorf("%s after a newer schema: %v, want a *checkpoint.FutureSchemaError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), "upgrade cairn") {
			t.Errorf("%s: the error does not say what to do: %v", c.name, err)
		}
	}
	if after := dump(t, url); after != before {
		t.Fatalf("the database changed:\nbefore %s\nafter  %s", before, after)
	}
	var blobsAfter string
	query(t, url, `SELECT string_agg(digest || ':' || stored::text, ' ' ORDER BY digest) FROM cairn_blobs`, nil, &blobsAfter)
	if blobsAfter != blobsBefore {
		t.Fatalf("cairn_blobs changed:\nbefore %s\nafter  %s", blobsBefore, blobsAfter)
	}
	var pause bool
	query(t, url, `SELECT pause FROM cairn_agents WHERE id = 'a1'`, nil, &pause)
	if !pause {
		t.Fatal("the pause request of a1 was cleared")
	}
}
