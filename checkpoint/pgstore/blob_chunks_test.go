package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// chunkedBlob is 10 chunks of 1 KiB and 7 bytes more.
func chunkedBlob() []byte {
	data := make([]byte, 10<<10+7)
	for i := range data {
		data[i] = byte(i * 7 % 253)
	}
	return data
}

// A chunk of a blob damaged, missing or left over is reported as the
// blob's damage, naming it, and storing the blob again repairs it.
func TestChunkedBlobDamageFoundAndRepaired(t *testing.T) {
	pgstore.SetBlobChunk(t, 1<<10)
	url := sharedURL(t)
	s := open(t, url)
	data := chunkedBlob()
	d, err := s.PutBlob(data)
	must(t, err)
	var n int
	query(t, url, `SELECT count(*) FROM cairn_blob_chunks WHERE digest = $1`, []any{d}, &n)
	if n != 11 {
		t.Fatalf("%d chunks stored, want 11", n)
	}
	for _, c := range []struct{ name, damage, said string }{
		{"byte flipped", `UPDATE cairn_blob_chunks SET data = overlay(data placing 'X'::bytea from 5) WHERE idx = 3`, "do not match its digest"},
		{"chunk missing", `DELETE FROM cairn_blob_chunks WHERE idx = 5`, "chunk 5 of its 11 is missing"},
		{"last chunk missing", `DELETE FROM cairn_blob_chunks WHERE idx = 10`, "chunk 10 of its 11 is missing"},
		{"chunk cut short", `UPDATE cairn_blob_chunks SET data = substring(data from 1 for 3) WHERE idx = 10`, "hold 10243 bytes of its 10247"},
		{"chunk left over", `INSERT INTO cairn_blob_chunks SELECT digest, 11, data FROM cairn_blob_chunks WHERE idx = 0`, "hold more than its 10247 bytes"},
		{"size lost", `UPDATE cairn_blobs SET size = NULL`, "neither where its bytes are nor how many"},
		{"chunks forgotten", `UPDATE cairn_blobs SET chunks = 0`, "its row in cairn_blobs does not match its digest"},
		// Regression: the read reserved the size the row claimed, 2 GiB,
		// before it found the chunks hold 10 KiB.
		{"size raised", `UPDATE cairn_blobs SET size = 2147483000`, "hold 10247 bytes of its 2147483000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			execSQL(t, url, c.damage)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := s.Blob(d)
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
				t.Errorf("reading a blob of 10 KiB with a %s allocated %d MiB", c.name, got>>20)
			}
			var cbe *pgstore.CorruptBlobError
			if !errors.Is(err, checkpoint.ErrCorrupt) || !errors.As(err, &cbe) || cbe.Digest != d || !strings.Contains(err.Error(), c.said) {
				t.Fatalf("a blob with a %s read: %v, want it corrupt saying %q", c.name, err, c.said)
			}
			if _, err := s.PutBlob(data); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Blob(d); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("after storing it again: %d bytes, %v; want it repaired", len(got), err)
			}
			query(t, url, `SELECT count(*) FROM cairn_blob_chunks WHERE digest = $1`, []any{d}, &n)
			if n != 11 {
				t.Fatalf("%d chunks after the repair, want 11", n)
			}
		})
	}
}

// A blob stored whole before schema version 9, larger than a chunk, is
// read as it was after the migration; storing it again keeps it in
// chunks, and collecting it removes its chunks too.
func TestBlobStoredWholeReadAfterMigration(t *testing.T) {
	url := sharedURL(t)
	must(t, pgstore.MigrateTo(context.Background(), url, 8))
	data := chunkedBlob()
	d := checkpoint.BlobDigest(data)
	execSQL(t, url, fmt.Sprintf(`INSERT INTO cairn_blobs (digest, data) VALUES ('%s', '\x%x')`, d, data))

	pgstore.SetBlobChunk(t, 1<<10)
	s := open(t, url)
	if got, err := s.Blob(d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("a blob stored whole, after the migration: %d bytes, %v", len(got), err)
	}
	if _, err := s.PutBlob(data); err != nil {
		t.Fatal(err)
	}
	var n int
	query(t, url, `SELECT count(*) FROM cairn_blob_chunks WHERE digest = $1`, []any{d}, &n)
	if got, err := s.Blob(d); err != nil || !bytes.Equal(got, data) || n != 11 {
		t.Fatalf("stored again: %d bytes in %d chunks, %v", len(got), n, err)
	}

	time.Sleep(5 * time.Millisecond) // older than the grace, by the database's clock too
	got, err := s.Collect(checkpoint.Retention{BlobGrace: time.Millisecond})
	must(t, err)
	if len(got.Files) != 1 || got.Files[0] != "blob "+d || got.Bytes != int64(len(data)) {
		t.Fatalf("collected %v, %d bytes; want the blob, %d bytes", got.Files, got.Bytes, len(data))
	}
	query(t, url, `SELECT count(*) FROM cairn_blob_chunks`, nil, &n)
	if n != 0 {
		t.Fatalf("%d chunks left after their blob was collected", n)
	}
}
