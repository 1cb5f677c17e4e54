package pgstore_test

import (
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: two writers of one process storing the same large blob at
// once (a workspace with two copies of one file, whose contents the
// store's writers keep in parallel) made the second wait for the first's
// whole transaction on the blob's row, and past lock_timeout it failed
// saying a session had left the row locked and to end it with
// pg_terminate_backend: the run was refused, and told to kill a healthy
// writer. The second waits for the first's write, and both succeed.
func TestSameLargeBlobStoredTwiceAtOnce(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	s := open(t, sharedURL(t), pgstore.WithTimeout(3*time.Second))
	data := chunkedBlob()
	reached, release := make(chan struct{}), make(chan struct{})
	first := true
	pgstore.OnChunkedBlob(t, func() {
		if first {
			first = false
			close(reached)
			<-release
		}
	})
	errs := make(chan error, 2)
	put := func() {
		_, err := s.PutBlob(data)
		errs <- err
	}
	go put()
	<-reached
	go put()
	// The second is waiting, or has failed.
	for pgstore.BlobWaiters(s, checkpoint.BlobDigest(data)) == 0 && len(errs) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("the same blob stored twice at once: %v", err)
		}
	}
	if got, err := s.Blob(checkpoint.BlobDigest(data)); err != nil || len(got) != len(data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}
