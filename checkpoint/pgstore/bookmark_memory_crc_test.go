package pgstore_test

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a byte flipped inside a string of a bookmark's or a memory
// fact's row, where the CBOR still decodes, was read as good: a fork from
// the bookmark began from a state that was never the agent's, and an
// agent recalled a fact no one wrote. The rows carry a checksum now, and
// such a row is reported as damage to it, by its table and key.
func TestFlippedByteInBookmarkOrMemoryRowFound(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 1)
	rec, err := s.Read("a1")
	must(t, err)
	must(t, s.PutBookmark("a1", checkpoint.Bookmark{Label: "before-deploy", Time: t0, State: rec.State}))
	must(t, s.Remember("team", checkpoint.Fact{Key: "region", Text: "eu-west-1", Time: t0}))
	execSQL(t, url, `UPDATE cairn_bookmarks SET data = overlay(data placing 'T'::bytea from position('turn 1'::bytea in data))`)
	execSQL(t, url, `UPDATE cairn_memory SET data = overlay(data placing 'u'::bytea from position('eu-west'::bytea in data))`)

	_, err = s.Bookmarks("a1")
	said(t, err, "cairn_bookmarks", "before-deploy", `agent "a1"`, "checksum", "DELETE FROM cairn_bookmarks")
	_, err = s.Recall("team")
	said(t, err, "cairn_memory", "region", "team", "checksum", "DELETE FROM cairn_memory")
}
