package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a chunked blob's write cut off by a restart of the database
// was sent again from its first chunk, the whole transaction having been
// rolled back: a restart late in the transfer of a large file cost it all
// again. Each chunk is now committed on its own, and the write that is
// sent again checks, by their SHA-256 computed in the database, the
// chunks already stored, and sends only those missing or not as they
// should be: here the chunk that failed and the ones after it, and a
// stored chunk damaged meanwhile.
func TestChunkedBlobRestartResumesFromChunkThatFailed(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	srv := pgtest.Start(t)
	url := srv.NewDatabase(t)
	s := open(t, url)
	data := chunkedBlob() // 11 chunks
	d := checkpoint.BlobDigest(data)
	sent := map[int]int{}
	cut := false
	pgstore.OnBlobChunk(t, func(idx int) {
		if sent[idx]++; idx == 6 && !cut {
			cut = true
			// A stored chunk damaged: to be found, and sent again. (A write
			// holding its chunks in one open transaction would keep this
			// waiting: lock_timeout lets it say so.)
			conn, err := pgx.Connect(context.Background(), url)
			must(t, err)
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), fmt.Sprintf(`SET lock_timeout = '2s';
				UPDATE cairn_blob_chunks SET data = '\x00' WHERE digest = '%s' AND idx = 2`, d)); err != nil {
				t.Errorf("damage chunk 2, stored: %v", err)
			}
			if _, err := open(t, url).Blob(d); !errors.Is(err, checkpoint.ErrNotFound) {
				t.Errorf("a blob whose write is under way read: %v, want not found", err)
			}
			srv.Restart(t)
		}
	})
	if _, err := s.PutBlob(data); err != nil {
		t.Fatalf("a chunked blob's write through a restart: %v", err)
	}
	want := map[int]int{0: 1, 1: 1, 2: 2, 3: 1, 4: 1, 5: 1, 6: 2, 7: 1, 8: 1, 9: 1, 10: 1}
	if fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Errorf("chunks sent, by index: %v; want %v (the chunk that failed and those after it, and the damaged one, again)", sent, want)
	}
	if got, err := s.Blob(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}

	// Stored again whole, it sends nothing: every chunk is there.
	clear(sent)
	if _, err := s.PutBlob(data); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 0 {
		t.Errorf("a blob stored again sent chunks %v; want none", sent)
	}
}

// A chunked blob whose write was cut off and never sent again (its
// process killed) reads as not stored, saying why and what to do; storing
// it finishes it, and gc removes it, chunks and all, once it is older
// than the grace and no agent names it.
func TestUnfinishedChunkedBlob(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	url := sharedURL(t)
	s := open(t, url)
	data := chunkedBlob()
	d := checkpoint.BlobDigest(data)
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
	other := open(t, url)
	_, err := other.Blob(d)
	if !errors.Is(err, checkpoint.ErrNotFound) || !bytes.Contains([]byte(err.Error()), []byte("store the blob again")) {
		t.Fatalf("a blob whose write was cut off read: %v, want not found, saying to store it again", err)
	}
	if _, err := other.PutBlob(data); err != nil {
		t.Fatal(err)
	}
	if got, err := other.Blob(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back once stored again: %d bytes, %v", len(got), err)
	}

	execSQL(t, url, fmt.Sprintf(`UPDATE cairn_blobs SET whole = false WHERE digest = '%s'`, d))
	time.Sleep(5 * time.Millisecond) // older than the grace, by the database's clock too
	got, err := other.Collect(checkpoint.Retention{BlobGrace: time.Millisecond})
	must(t, err)
	if len(got.Files) != 1 || got.Files[0] != "blob "+d {
		t.Fatalf("collected %v; want the unfinished blob", got.Files)
	}
	var n int
	query(t, url, `SELECT count(*) FROM cairn_blob_chunks`, nil, &n)
	if n != 0 {
		t.Fatalf("%d chunks left after their unfinished blob was collected", n)
	}
}

// Regression: a chunked blob's unfinished row removed in the middle of its
// write (by gc, its writer stalled past the grace, or by hand) failed the
// write's next chunk with the database's foreign key violation. The write
// finds its row gone and starts again, and the blob is stored whole.
func TestChunkedBlobRowRemovedMidWriteStoredAgain(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	url := sharedURL(t)
	s := open(t, url)
	data := chunkedBlob()
	d := checkpoint.BlobDigest(data)
	removed := false
	pgstore.OnBlobChunk(t, func(idx int) {
		if idx == 5 && !removed {
			removed = true
			execSQL(t, url, fmt.Sprintf(`DELETE FROM cairn_blobs WHERE digest = '%s'`, d))
		}
	})
	if _, err := s.PutBlob(data); err != nil {
		t.Fatalf("a chunked blob whose unfinished row was removed mid-write: %v", err)
	}
	if got, err := s.Blob(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}
