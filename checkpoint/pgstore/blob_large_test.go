package pgstore_test

import (
	"bytes"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a blob was one value of one row, and PostgreSQL takes no
// value of 1 GB or more, below the 1 GiB a workspace may hold by default:
// a workspace holding one such file could not be kept, and the run was
// refused. A blob past that is stored and read back whole.
func TestBlobOverPostgresValueLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 2 GiB through the server")
	}
	s := open(t, sharedURL(t))
	data := make([]byte, 1<<30+1)
	for i := range data {
		data[i] = byte(i % 251)
	}
	d, err := s.PutBlob(data)
	if err != nil {
		t.Fatalf("store a blob of %d bytes: %v", len(data), err)
	}
	if d != checkpoint.BlobDigest(data) {
		t.Fatalf("stored as %s", d)
	}
	got, err := s.Blob(d)
	if err != nil {
		t.Fatalf("read a blob of %d bytes: %v", len(data), err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes back, not the %d stored", len(got), len(data))
	}
}
