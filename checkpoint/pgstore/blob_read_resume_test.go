package pgstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a chunked blob's read cut off by a restart of the database
// started again from chunk 0, though the write side goes on from the
// chunk it reached: a restart late in the read of a large file cost it
// all again. The read goes on from the chunk it reached, and is checked
// as a whole all the same: a chunk damaged past that point, while the
// database was away, is reported as the blob's damage.
func TestChunkedBlobReadRestartResumesFromChunkReached(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<9)
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	s := open(t, url)
	data := chunkedBlob() // 21 chunks of 512 bytes: statements from 0, 8 and 16
	d, err := s.PutBlob(data)
	must(t, err)

	read := func(cut func()) ([]byte, []int, error) {
		var froms []int
		pgstore.OnBlobChunksRead(t, func(from int) {
			if froms = append(froms, from); from == 16 && cut != nil {
				cut()
				cut = nil
			}
		})
		got, err := s.Blob(d)
		return got, froms, err
	}
	got, froms, err := read(func() { srv.Restart(t) })
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("a chunked blob's read through a restart: %d bytes, %v", len(got), err)
	}
	if want := []int{0, 8, 16, 16}; fmt.Sprint(froms) != fmt.Sprint(want) {
		t.Errorf("chunks asked for, from: %v; want %v (the read goes on from the chunk it reached)", froms, want)
	}

	// Damaged while the database was away, past the chunk reached.
	_, froms, err = read(func() {
		srv.Stop(t)
		srv.Start(t)
		execSQL(t, url, fmt.Sprintf(`UPDATE cairn_blob_chunks SET data = '\x00' || substr(data, 2) WHERE digest = '%s' AND idx = 18`, d))
	})
	if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), d) {
		t.Fatalf("a chunked blob's read through a restart, a chunk past it damaged meanwhile: %v (asked from %v); want it corrupt, naming it", err, froms)
	}
}
