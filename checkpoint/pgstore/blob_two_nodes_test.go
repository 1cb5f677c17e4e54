package pgstore_test

import (
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: two nodes storing the same large blob at once (two agents
// whose workspaces hold one file, started together) made the second wait
// on the blob's row, locked by the first's transaction for as long as its
// bytes took, and past lock_timeout it was refused, told that a session
// had left the row locked and to end it with pg_terminate_backend. The
// second waits for the first, and both succeed.
func TestSameLargeBlobStoredByTwoNodesAtOnce(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	url := sharedURL(t)
	a := open(t, url, pgstore.WithTimeout(3*time.Second))
	b := open(t, url, pgstore.WithTimeout(3*time.Second))
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
	go func() {
		_, err := a.PutBlob(data)
		errs <- err
	}()
	<-reached
	go func() {
		_, err := b.PutBlob(data)
		errs <- err
	}()
	// The second is waiting, or has failed.
	for pgstore.BlobWaits(b) == 0 && len(errs) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("the same blob stored by two nodes at once: %v", err)
		}
	}
	if got, err := b.Blob(checkpoint.BlobDigest(data)); err != nil || len(got) != len(data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}
