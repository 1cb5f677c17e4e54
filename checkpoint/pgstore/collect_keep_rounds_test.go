package pgstore_test

import (
	"errors"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Collect refuses to keep only the last rounds of agents' events and
// pasts, which it keeps in rows it does not trim, and removes nothing:
// a caller that asked for it is told, not left to think the rows gone.
func TestCollectRefusesKeepRounds(t *testing.T) {
	s := open(t, sharedURL(t))
	unused, err := s.PutBlob([]byte("no one names this"))
	must(t, err)
	got, err := s.Collect(checkpoint.Retention{Rounds: 10, BlobGrace: 1})
	if !errors.Is(err, pgstore.ErrKeepRounds) || got != nil {
		t.Fatalf("collect with Rounds: %+v, %v", got, err)
	}
	if _, err := s.Blob(unused); err != nil {
		t.Fatalf("a refused collect removed a blob: %v", err)
	}
}
