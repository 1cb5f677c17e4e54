package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: following the history of an agent in a store whose reader
// is a copy (MemStore, pgstore) stopped at the copy's end and saw nothing
// the run added later. Lines a holder of the agent appends while the
// follower waits reach it, every one, in order.
func TestFollowSeesLaterEventsOfACopyingStore(t *testing.T) {
	store := checkpoint.NewMemStore()
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	must(t, err)
	defer eng.Close(context.Background())
	af := agentIn(t, "name: f\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns:\n  - text: done\n")
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "f", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	var before int
	must(t, ReadHistory(t.Context(), store, "f", false, func(Event, []byte) error { before++; return nil }))

	lock, err := store.Lock("f", checkpoint.ThisProcess("test"))
	must(t, err)
	w, err := store.Events("f")
	must(t, err)
	const added = 5
	seen := make(chan int, 100)
	done := make(chan error, 1)
	go func() {
		n := 0
		done <- ReadHistory(t.Context(), store, "f", true, func(e Event, _ []byte) error {
			n++
			if n > before {
				seen <- n - before
			}
			return nil
		})
	}()
	for i := 1; i <= added; i++ {
		fmt.Fprintf(w, `{"type":"warning","text":"line %d"}`+"\n", i)
		if got := <-seen; got != i {
			t.Fatalf("the follower's %d-th new event is the %d-th added", got, i)
		}
	}
	w.Close()
	lock.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := ReadHistory(t.Context(), store, "f", false, nil); err == nil {
		t.Fatal("ReadHistory with no function: no error")
	}
}
