package checkpoint

import (
	"fmt"
	"testing"
	"time"
)

// Regression: Bookmarks lists the agent's bookmark files, then reads
// each, without the agent's lock; a gc that removed an old bookmark
// between the two made it fail with the file's "no such file or
// directory", so a fork from a bookmark gc kept, or a look at the
// agent, failed beside a `cairn gc --keep-bookmarks`. A bookmark gone
// since the listing is one that is no longer there, and is left out.
func TestBookmarksBesideGCKeepBookmarksListsTheOnesLeft(t *testing.T) {
	s, st := exportable(t)
	const n = 300
	for i := range n {
		must(t, s.PutBookmark("a1", Bookmark{Label: fmt.Sprintf("m%03d", i), Round: 3, Time: t0.Add(time.Duration(i) * time.Second), State: st}))
	}
	done := make(chan error)
	go func() {
		_, err := s.Collect(Retention{Bookmarks: 1})
		done <- err
	}()
	for reads := 0; ; reads++ {
		select {
		case err := <-done:
			must(t, err)
			bs, err := s.Bookmarks("a1")
			if err != nil || len(bs) != 1 || bs[0].Label != fmt.Sprintf("m%03d", n-1) {
				t.Fatalf("after gc: %d bookmarks, %v", len(bs), err)
			}
			t.Logf("%d reads beside gc", reads)
			return
		default:
		}
		bs, err := s.Bookmarks("a1")
		if err != nil {
			<-done
			t.Fatalf("bookmarks beside gc, read %d: %v", reads+1, err)
		}
		if len(bs) == 0 || bs[len(bs)-1].Label != fmt.Sprintf("m%03d", n-1) {
			<-done
			t.Fatalf("bookmarks beside gc lost the newest: %d left", len(bs))
		}
	}
}
