package host

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Many agents run at once in one engine on a group-committed store; each
// ends where it would alone, and reads back whole after the store closes.
func TestManyAgentsShareGroupCommit(t *testing.T) {
	dir := t.TempDir()
	store, err := OpenStore(dir, checkpoint.WithGroupCommit())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	af := agentIn(t, limitAgent("{}"), fourRounds)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: fmt.Sprintf("many-%d", i), Prompt: "go"})
			if err == nil && (res.Status != StatusDone || res.Rounds != 5) {
				err = fmt.Errorf("agent %d: %s after %d rounds", i, res.Status, res.Rounds)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	list, err := reopened.List()
	if err != nil || len(list) != 16 {
		t.Fatalf("%d agents, %v", len(list), err)
	}
	for _, s := range list {
		if s.Err != nil || s.Round != 5 || s.Status != checkpoint.StatusDone {
			t.Errorf("%s: round %d, %s, %v", s.ID, s.Round, s.Status, s.Err)
		}
	}
}
