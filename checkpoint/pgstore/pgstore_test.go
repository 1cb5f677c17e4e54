package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/checkpoint/storetest"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// open opens a store on url, closed when the test ends.
func open(t testing.TB, url string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T) checkpoint.Store { return open(t, srv.NewDatabase(t)) })
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
