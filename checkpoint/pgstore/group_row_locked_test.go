package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: a write that shared a transaction with other agents' and
// failed for a cause of its own the server answered — its lease row held
// by a session that does not end — failed the others' writes with it, and
// their runs stopped for another agent's trouble. The group is sent again
// one write at a time, as for a fenced agent, so only that agent fails.
func TestGroupCommitFailsOnlyTheAgentWhoseRowIsHeld(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url, pgstore.WithTimeout(3*time.Second)) // lock_timeout 1 s
	const agents = 6
	logs := make([]checkpoint.Log, agents)
	for i := range logs {
		id := fmt.Sprintf("g%d", i)
		lock, err := s.Lock(id, checkpoint.ThisProcess("run-1"))
		must(t, err)
		defer lock.Unlock()
		logs[i], err = s.Create(id, newState(id))
		must(t, err)
	}
	ctx := context.Background()
	hold := func(id string) pgx.Tx {
		conn, err := pgx.Connect(ctx, url)
		must(t, err)
		t.Cleanup(func() { conn.Close(ctx) })
		tx, err := conn.Begin(ctx)
		must(t, err)
		if _, err := tx.Exec(ctx, `SELECT 1 FROM cairn_leases WHERE agent = $1 FOR UPDATE`, id); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	// g0's row is held a while: its write is in flight, and the others',
	// sent meanwhile, wait for it and go in one transaction, g1's with
	// them, whose row is held for good.
	first := hold("g0")
	stuck := hold("g1")
	defer stuck.Rollback(ctx)
	errs := make([]error, agents)
	var wg sync.WaitGroup
	write := func(i int) {
		defer wg.Done()
		errs[i] = logs[i].Sync()
	}
	wg.Add(agents)
	go write(0)
	time.Sleep(300 * time.Millisecond)
	for i := 1; i < agents; i++ {
		go write(i)
	}
	time.Sleep(300 * time.Millisecond)
	must(t, first.Rollback(ctx))
	wg.Wait()
	for i, err := range errs {
		if (i == 1) != (err != nil) {
			t.Errorf("agent g%d: %v", i, err)
		}
	}
	if errs[1] != nil && errors.Is(errs[1], pgstore.ErrUnavailable) {
		t.Errorf("g1's held row is said to be the database unavailable: %v", errs[1])
	}
}
