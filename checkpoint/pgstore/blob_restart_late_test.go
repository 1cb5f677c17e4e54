package pgstore_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a chunked blob's write or read that had run longer than
// the store's timeout when the database restarted under it was not tried
// again, its tries counted from its start, and failed as the database
// unavailable, however soon the database was back. Each is tried again
// once the database is back, and the blob stored and read whole.
func TestChunkedBlobRestartLateInTransfer(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	const timeout = time.Second
	s := open(t, url, pgstore.WithTimeout(timeout))
	late := func(tries *int) func() {
		return func() {
			if *tries++; *tries == 1 {
				time.Sleep(timeout + 100*time.Millisecond) // a long transfer, past the timeout
				srv.Restart(t)
			}
		}
	}
	var puts, reads int
	pgstore.OnChunkedBlob(t, late(&puts))
	data := chunkedBlob()
	d, err := s.PutBlob(data)
	if err != nil {
		t.Fatalf("a chunked blob's write, the database restarted late in it: %v", err)
	}
	if puts < 2 {
		t.Fatalf("the write was tried %d times: the restart did not cut it", puts)
	}
	pgstore.OnChunkedBlobRead(t, late(&reads))
	got, err := s.Blob(d)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("a chunked blob's read, the database restarted late in it: %d bytes, %v", len(got), err)
	}
	if reads < 2 {
		t.Fatalf("the read was tried %d times: the restart did not cut it", reads)
	}
}
