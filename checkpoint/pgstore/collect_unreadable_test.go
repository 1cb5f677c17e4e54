package pgstore_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: Collect stopped at the first agent it could not read and
// collected nothing after it. As the file store's does
// (TestGCGoesOnPastAnUnreadableAgent), it now leaves that agent as it is
// (its bookmarks too), names it in Unreadable, collects the agents after
// it, and removes no blob, since any blob may be one the agent names.
func TestCollectGoesOnPastAnUnreadableAgent(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	unused, err := s.PutBlob([]byte("no one names this"))
	must(t, err)
	for _, id := range []string{"a1", "b1"} {
		lock, err := s.Lock(id, checkpoint.ThisProcess("run"))
		must(t, err)
		st := newState(id)
		log, err := s.Create(id, st)
		must(t, err)
		commitRound(t, log, 1)
		must(t, s.PutBookmark(id, checkpoint.Bookmark{Label: "old", Time: t0, State: st}))
		must(t, s.PutBookmark(id, checkpoint.Bookmark{Label: "new", Time: t0.Add(time.Second), State: st}))
		must(t, lock.Unlock())
	}
	execSQL(t, url, `UPDATE cairn_agents SET snapshot = substring(snapshot from 1 for 10) WHERE id = 'a1'`)
	time.Sleep(5 * time.Millisecond) // older than the grace, by the database's clock too
	got, err := s.Collect(checkpoint.Retention{Bookmarks: 1, BlobGrace: time.Millisecond})
	if err != nil {
		t.Fatalf("collect failed at the unreadable agent: %v", err)
	}
	if len(got.Unreadable) != 1 || got.Unreadable[0].Agent != "a1" || !strings.Contains(got.Unreadable[0].Reason, "cairn_agents") {
		t.Fatalf("unreadable %+v, want a1, saying why", got.Unreadable)
	}
	if !slices.Equal(got.Files, []string{"bookmark b1/old"}) || !strings.Contains(got.BlobsKept, "a1") {
		t.Fatalf("removed %v (blobs kept: %q); want b1's old bookmark alone, every blob kept", got.Files, got.BlobsKept)
	}
	if bs, err := s.Bookmarks("a1"); err != nil || len(bs) != 2 {
		t.Fatalf("the unreadable agent's bookmarks: %d, %v; want both left", len(bs), err)
	}
	if _, err := s.Blob(unused); err != nil {
		t.Fatalf("a blob was removed though an agent could not be read: %v", err)
	}
}
