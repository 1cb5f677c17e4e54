package pgstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: gc counted an unfinished chunked blob (its write cut off,
// whole false) at the size its row declares, though what its removal
// frees is only the chunks that were stored. It counts those, in a dry
// run as in a removal, and a whole blob still at its size.
func TestCollectCountsUnfinishedBlobAtChunksStored(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	url := sharedURL(t)
	s := open(t, url)
	data := chunkedBlob() // 11 chunks of 1 KiB, the last of 7 bytes
	cut := errors.New("cut")
	pgstore.OnBlobChunk(t, func(idx int) {
		if idx == 4 {
			panic(cut)
		}
	})
	func() {
		defer func() {
			if r := recover(); r != cut {
				panic(r)
			}
		}()
		s.PutBlob(data)
	}()
	pgstore.OnBlobChunk(t, func(int) {})
	whole, err := s.PutBlob([]byte("a whole blob of 25 bytes."))
	must(t, err)
	time.Sleep(5 * time.Millisecond) // older than the grace, by the database's clock too

	const want = 4<<10 + 25 // chunks 0 to 3 were stored, and the whole blob
	for _, dry := range []bool{true, false} {
		got, err := s.Collect(checkpoint.Retention{BlobGrace: time.Millisecond, DryRun: dry})
		must(t, err)
		if len(got.Files) != 2 || got.Bytes != want {
			t.Errorf("collected (dry run %v) %v, %d bytes; want the unfinished blob and %s, %d bytes (what is stored of them)",
				dry, got.Files, got.Bytes, whole, want)
		}
	}
}
