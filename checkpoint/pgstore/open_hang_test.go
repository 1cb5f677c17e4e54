package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: Open with a context that has no deadline (as every cairn
// command gives it) waited for ever on a server that accepts connections
// and never answers them (a stopped postmaster, a host that hangs):
// `cairn ls` hung. Open is bounded by the store's timeout, as every other
// operation is, and then says the database is unavailable.
func TestOpenOfAnUnansweringServerTimesOut(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	srv.Freeze(t)
	done := make(chan error, 1)
	go func() {
		s, err := pgstore.Open(context.Background(), url, pgstore.WithTimeout(2*time.Second))
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, pgstore.ErrUnavailable) || !strings.Contains(err.Error(), "check that PostgreSQL is running") {
			t.Fatalf("open of a server that does not answer: %v, want ErrUnavailable", err)
		}
	case <-time.After(20 * time.Second):
		srv.Thaw(t)
		t.Fatal("open of a server that does not answer still waits after 20 s, its timeout 2 s")
	}
}
