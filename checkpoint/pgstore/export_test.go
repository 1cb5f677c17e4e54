package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnrun/cairn/checkpoint"
)

// Pause stops a lease's renewal, as if its holder were stopped or cut off.
func Pause(l checkpoint.Lock) { l.(*lease).stopRenewing() }

// MigrateTo sets up the database at url at schema version n, as an
// older cairn would have.
func MigrateTo(ctx context.Context, url string, n int) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	ms, err := migrations()
	if err != nil {
		return err
	}
	return migrateTo(ctx, pool, ms[:n], "")
}

// Clean reports whether Check finds agent readable without reading it.
func Clean(s *Store, agent string) bool { return s.clean(agent) }

// Show is the value of the server's setting name in a session of s's.
func Show(s *Store, name string) (string, error) {
	var v string
	err := s.pool.QueryRow(context.Background(), "SHOW "+name).Scan(&v)
	return v, err
}

// OnTrim makes f see every trim's transaction (checkpoint.Retention.Rounds)
// between its pasts' statements and its history's, until the test ends.
func OnTrim(t interface{ Cleanup(func()) }, f func(b *pgx.Batch)) {
	trimHook = f
	t.Cleanup(func() { trimHook = nil })
}

// SetBlobChunk makes blobs larger than n bytes be stored in chunks of n,
// until the test ends.
func SetBlobChunk(t interface{ Cleanup(func()) }, n int) {
	old := blobChunk
	blobChunk = n
	t.Cleanup(func() { blobChunk = old })
}

// SetSpace makes s take leases as a process of another machine whose host
// name may be this one's: where its pid names no process of this one.
func SetSpace(s *Store, space string) { s.space = space }

// OnChunkedBlob makes f run in each chunked blob's write, its row written
// and the blob's advisory lock held, before its chunks, until the test
// ends.
func OnChunkedBlob(t interface{ Cleanup(func()) }, f func()) {
	blobHook = f
	t.Cleanup(func() { blobHook = nil })
}

// OnChunkedBlobRead makes f run in the transaction of each chunked
// blob's read, its row read, before its chunks, until the test ends.
func OnChunkedBlobRead(t interface{ Cleanup(func()) }, f func()) {
	blobReadHook = f
	t.Cleanup(func() { blobReadHook = nil })
}

// OnMigration makes f run in the transaction of each migration Open
// applies, after each of its files, until the test ends.
func OnMigration(t interface{ Cleanup(func()) }, f func()) {
	migrationHook = f
	t.Cleanup(func() { migrationHook = nil })
}

// BlobWaiters is how many writers wait for another of s's to store the
// blob.
func BlobWaiters(s *Store, digest string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flights[digest]; f != nil {
		return f.waiters
	}
	return 0
}

// BlobWaits is how often s's chunked blob writes found another session
// writing the same blob, and waited.
func BlobWaits(s *Store) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blobWaits
}

// OnBlobChunk makes f run before each chunk of a chunked blob's write is
// sent, with the chunk's index, until the test ends.
func OnBlobChunk(t interface{ Cleanup(func()) }, f func(idx int)) {
	blobChunkHook = f
	t.Cleanup(func() { blobChunkHook = nil })
}

// OnFenced makes f run once a write is refused by its fence, before the
// lease row is read for the error, until the test ends.
func OnFenced(t interface{ Cleanup(func()) }, f func()) {
	fencedHook = f
	t.Cleanup(func() { fencedHook = nil })
}

// OnBlobChunksRead makes f run before each statement of a chunked blob's
// read that fetches its chunks, with the index of the first it asks for,
// until the test ends.
func OnBlobChunksRead(t interface{ Cleanup(func()) }, f func(from int)) {
	blobChunksReadHook = f
	t.Cleanup(func() { blobChunksReadHook = nil })
}
