package pgstore_test

import (
	"bytes"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// A restart of the database in the middle of a chunked blob's write
// leaves no part of it: the write is sent again on a new connection, and
// the blob reads back whole.
func TestChunkedBlobWriteThroughRestart(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	s := open(t, url)
	tries := 0
	pgstore.OnChunkedBlob(t, func() {
		if tries++; tries == 1 {
			srv.Restart(t)
		}
	})
	data := chunkedBlob()
	d, err := s.PutBlob(data)
	if err != nil {
		t.Fatalf("a chunked blob's write through a restart: %v", err)
	}
	if tries < 2 {
		t.Fatalf("the write was tried %d times: the restart did not cut it", tries)
	}
	if got, err := s.Blob(d); err != nil || !bytes.Equal(got, data) || d != checkpoint.BlobDigest(data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}
