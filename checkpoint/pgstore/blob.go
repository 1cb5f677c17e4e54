package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairnrun/cairn/checkpoint"
)

// Blobs. A blob of at most blobChunk bytes is one value, in its row of
// cairn_blobs. A larger one is kept in rows of cairn_blob_chunks of
// blobChunk bytes each (the last one shorter), numbered from 0, and its
// row of cairn_blobs holds no data but its size and how many chunks it
// has (schema version 9): PostgreSQL takes no value of 1 GB or more, and
// pgx sends no message that large, below the 1 GiB a workspace may hold
// by default. The row is made first, unfinished (whole = false, schema
// version 12), which a read takes as no blob; each chunk is then written
// in a transaction of its own, so that a write cut off by a restart of
// the database goes on, checked, from the chunks it stored (putChunks);
// the row is made whole by the transaction that finds every chunk there,
// so a whole row never names chunks that are not there. A blob is read a
// few chunks a statement, each statement bounded by the store's timeout,
// in one snapshot of the database; a read cut off goes on from the chunk
// it reached in a new one (blobRead), its bytes checked as a whole. A blob is held whole in memory while it
// is written or read (checkpoint.Store takes and gives its bytes): about
// its size, plus a chunk or two in pgx's buffers.

// blobChunk is the most bytes of a blob kept in one value.
var blobChunk = 4 << 20

// chunksARead is how many chunks one statement of a read fetches.
const chunksARead = 8

// blobHook, when set by a test, is called in a chunked blob's write once
// its row is written, before its chunks.
var blobHook func()

// blobChunkHook, when set by a test, is called in a chunked blob's write
// before each chunk is sent, with its index.
var blobChunkHook func(idx int)

// blobReadHook, when set by a test, is called in the transaction of a
// chunked blob's read once its row is read, before its chunks.
var blobReadHook func()

// blobChunksReadHook, when set by a test, is called before each statement
// of a chunked blob's read that fetches chunks, with the first it asks for.
var blobChunksReadHook func(from int)

// PutBlob stores content by its digest, once for every agent. Storing a
// blob that is there makes it fresh again, so that Collect leaves it to
// whoever stores it now, and compares the stored bytes with data: a row
// (or a chunk) that no longer holds them (damaged by a disk, a bad
// restore or a hand) is given them again, so that storing a blob repairs
// it — an import of an export that holds it, or a run that stores the
// same file. A row that holds them keeps its bytes as they are. Storing
// it twice is storing it once, so a failure of the connection sends it
// again.
func (s *Store) PutBlob(data []byte) (string, error) {
	d := checkpoint.BlobDigest(data)
	if len(data) > blobChunk {
		if err := s.putLarge(d, data); err != nil {
			return "", fmt.Errorf("store blob %s of %d bytes: %w", d, len(data), err)
		}
		return d, nil
	}
	if data == nil {
		data = []byte{} // an empty blob, not a missing one
	}
	if _, err := s.exec(idempotent, `INSERT INTO cairn_blobs (digest, data) VALUES ($1, $2)
		ON CONFLICT (digest) DO UPDATE SET stored = now(),
		data = CASE WHEN cairn_blobs.data = excluded.data THEN cairn_blobs.data ELSE excluded.data END`, d, data); err != nil {
		return "", fmt.Errorf("store blob: %w", err)
	}
	return d, nil
}

// blobFlight is a chunked blob's write, which other writers of the same
// blob wait for.
type blobFlight struct {
	done    chan struct{} // closed once err is set
	err     error
	waiters int // how many wait (for tests)
}

// putLarge writes a blob larger than a chunk, or waits for the write of
// the same blob that another goroutine of the Store has begun and gives
// its outcome: the second would wait on the blob's row, locked by the
// first's transaction for as long as its bytes take, and be refused past
// lock_timeout as if a session had left it locked (two copies of one file
// in a workspace are stored in parallel).
func (s *Store) putLarge(digest string, data []byte) error {
	s.mu.Lock()
	if f := s.flights[digest]; f != nil {
		f.waiters++
		s.mu.Unlock()
		<-f.done
		return f.err
	}
	f := &blobFlight{done: make(chan struct{})}
	s.flights[digest] = f
	s.mu.Unlock()
	f.err = s.putResumed(digest, data)
	if fe := futureSchema(f.err, s.version); fe != nil {
		f.err = fe
	}
	f.err = wrapConn(f.err)
	s.mu.Lock()
	delete(s.flights, digest)
	s.mu.Unlock()
	close(f.done)
	return f.err
}

// putResumed writes a chunked blob with putChunks, sent again after a
// failure of the connection as retryLong allows, and then again for as
// long as each write sent again commits chunks, so that a database that
// restarts more than once in a long transfer is gone through as one that
// restarts once: each time, the write goes on from the chunks stored. A
// write that found its unfinished row removed (errBlobGone) starts again,
// up to three times in a row.
func (s *Store) putResumed(digest string, data []byte) error {
	sums := sumChunks(data)
	for gone := 0; ; {
		sent := 0
		err := s.retryLong(idempotent, func() error {
			n, err := s.putChunks(digest, data, sums)
			sent += n
			return err
		})
		switch {
		case errors.Is(err, errBlobGone) && gone < 3:
			gone++
		case err != nil && sent > 0 && idempotent(err):
			gone = 0
		default:
			return err
		}
	}
}

// putChunks writes a blob larger than a chunk once no other session
// writes the same blob (waitBlob): its row, unfinished (whole = false,
// which a read takes as no blob), then each of its chunks that the
// database does not hold already, each in a transaction of its own, then,
// once every chunk is there, its row made whole. A write cut off (a
// restart of the database) and sent again so goes on from the chunks it
// stored: those the database holds are checked by their SHA-256, computed
// there (no byte of them is sent back), against the chunks of data, and
// one that differs (damaged meanwhile, or by a bad restore) is sent again
// as a missing one is. A blob stored again that is whole sends nothing.
// It returns how many chunks it committed, for putResumed to judge
// progress.
func (s *Store) putChunks(digest string, data []byte, sums [][sha256.Size]byte) (sent int, err error) {
	n := len(sums)
	ctx, cancel := s.opContext()
	conn, err := s.pool.Acquire(ctx)
	cancel()
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	if err := s.waitBlob(conn, digest); err != nil {
		return 0, err
	}
	defer s.unwaitBlob(conn, digest)
	err = s.txOn(conn, pgx.TxOptions{}, func(exec func(string, ...any) error, _ queryFunc) error {
		if err := exec(schemaCheckSQL, s.version); err != nil {
			return err
		}
		return exec(`INSERT INTO cairn_blobs (digest, data, size, chunks, whole) VALUES ($1, '', $2, $3, false)
			ON CONFLICT (digest) DO UPDATE SET stored = now()`, digest, len(data), n)
	})
	if err != nil {
		return 0, err
	}
	if blobHook != nil {
		blobHook()
	}
	have, err := s.chunkSums(conn, digest, n)
	if err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		if have[i] == sums[i] {
			continue
		}
		if blobChunkHook != nil {
			blobChunkHook(i)
		}
		err := s.txOn(conn, pgx.TxOptions{}, func(exec func(string, ...any) error, query queryFunc) error {
			if err := exec(schemaCheckSQL, s.version); err != nil {
				return err
			}
			// The row kept fresh for gc, and locked against its removal
			// until the chunk is in; one removed already (gc, its writer
			// stalled past the grace) is made again.
			if err := mustUpdate(query, `UPDATE cairn_blobs SET stored = now() WHERE digest = $1 RETURNING 1`, digest); err != nil {
				return err
			}
			return exec(`INSERT INTO cairn_blob_chunks (digest, idx, data) VALUES ($1, $2, $3)
				ON CONFLICT (digest, idx) DO UPDATE SET data = excluded.data`,
				digest, i, data[i*blobChunk:min(len(data), (i+1)*blobChunk)])
		})
		if err != nil {
			return sent, err
		}
		sent++
	}
	return sent, s.txOn(conn, pgx.TxOptions{}, func(exec func(string, ...any) error, query queryFunc) error {
		if err := exec(schemaCheckSQL, s.version); err != nil {
			return err
		}
		if err := exec(`DELETE FROM cairn_blob_chunks WHERE digest = $1 AND idx >= $2`, digest, n); err != nil {
			return err
		}
		// Every chunk there, of its length: gc may have removed the
		// unfinished row, and its chunks with it, meanwhile.
		return mustUpdate(query, `UPDATE cairn_blobs SET stored = now(), data = '', size = $2, chunks = $3, whole = true
			WHERE digest = $1 AND (SELECT count(*) = $3 AND coalesce(sum(length(data)), 0) = $2
				FROM cairn_blob_chunks WHERE digest = $1) RETURNING 1`, digest, len(data), n)
	})
}

// mustUpdate runs an UPDATE … RETURNING 1 of a chunked blob's row, which
// is errBlobGone when it updates no row.
func mustUpdate(query queryFunc, sql string, args ...any) error {
	rows, cancel, err := query(sql, args...)
	if err != nil {
		return err
	}
	updated, err := pgx.CollectRows(rows, pgx.RowTo[int])
	cancel()
	if err == nil && len(updated) == 0 {
		return errBlobGone
	}
	return err
}

// errUnfinished is a chunked blob's row whose write has not made it whole.
var errUnfinished = errors.New("unfinished")

// errBlobGone is a chunked blob's write that found its row or chunks gone
// before it made the row whole (gc removed the unfinished row):
// putResumed writes it again.
var errBlobGone = errors.New("the blob's unfinished row, or some of its chunks, were removed while it was written " +
	"(by gc, or by hand), each of four times: nothing of it is stored; store it again once nothing removes it")

// chunkSums reads the SHA-256 of each chunk of a blob of n chunks that
// the database holds, computed there, chunksASum chunks a statement, each
// bounded by the store's timeout; a chunk it lacks is left zero.
func (s *Store) chunkSums(conn *pgxpool.Conn, digest string, n int) ([][sha256.Size]byte, error) {
	have := make([][sha256.Size]byte, n)
	for from := 0; from < n; from += chunksASum {
		ctx, cancel := s.opContext()
		rows, err := conn.Query(ctx, `SELECT idx, sha256(data) FROM cairn_blob_chunks WHERE digest = $1 AND idx >= $2 AND idx < $3`,
			digest, from, min(n, from+chunksASum))
		if err != nil {
			cancel()
			return nil, err
		}
		var idx int32
		var sum []byte
		_, err = pgx.ForEachRow(rows, []any{&idx, &sum}, func() error {
			copy(have[idx][:], sum)
			return nil
		})
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return have, nil
}

// chunksASum is how many chunks one statement of chunkSums hashes.
const chunksASum = 16

// sumChunks is the SHA-256 of each chunk of data.
func sumChunks(data []byte) [][sha256.Size]byte {
	n := (len(data) + blobChunk - 1) / blobChunk
	sums := make([][sha256.Size]byte, n)
	for i := range sums {
		sums[i] = sha256.Sum256(data[i*blobChunk : min(len(data), (i+1)*blobChunk)])
	}
	return sums
}

// waitBlob takes, on conn, the advisory lock of a chunked blob's writes,
// waiting while another session (another node) holds it: that session
// writes the same blob, and what it stores this one need not send again.
// It asks again, pausing longer each time (up to a second), for up to ten
// times the store's timeout, since the other's bytes may take long: a
// writer whose node died is ended by the server within about the lease's
// time to live (deadPeerParams), and its lock with it, but one stopped
// (SIGSTOP) holds it for as long as it is stopped. The lock is the
// session's, held across the write's transactions until unwaitBlob, or
// until the connection ends (a restart of the database).
func (s *Store) waitBlob(conn *pgxpool.Conn, digest string) error {
	key := blobLockKey(digest)
	start := time.Now()
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		if waited := time.Since(start); waited > 10*s.timeout {
			return fmt.Errorf("another session of the database has been storing the same blob for %s and has not finished; "+
				"nothing was changed — find it in pg_stat_activity (a cairn session that holds an advisory lock, "+
				"pg_locks.locktype = 'advisory'), end it with SELECT pg_terminate_backend(pid) if its process is stopped or gone, "+
				"then try again", waited.Round(time.Second))
		}
		ctx, cancel := s.opContext()
		var got bool
		err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, blobLockSpace, key).Scan(&got)
		cancel()
		if err != nil || got {
			return err
		}
		s.mu.Lock()
		s.blobWaits++
		s.mu.Unlock()
		time.Sleep(pause)
	}
}

// unwaitBlob lets go of waitBlob's lock; a connection on which it cannot
// is closed, so that no other use of it holds the lock.
func (s *Store) unwaitBlob(conn *pgxpool.Conn, digest string) {
	ctx, cancel := s.opContext()
	defer cancel()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, blobLockSpace, blobLockKey(digest)); err != nil {
		conn.Conn().Close(ctx)
	}
}

// blobLockSpace is the first key of the advisory locks of chunked blobs'
// writes ("blob"); the second is blobLockKey's.
const blobLockSpace = 0x626c6f62

// blobLockKey is a chunked blob's advisory lock key: the first 32 bits of
// its digest.
func blobLockKey(digest string) int32 {
	b, _ := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	if len(b) < 4 {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// queryFunc runs a query in a transaction of inTx or txOn; the caller
// closes its rows and then calls its CancelFunc.
type queryFunc = func(string, ...any) (pgx.Rows, context.CancelFunc, error)

// inTx runs f in a transaction of opts, each of whose statements (exec's,
// query's) and its begin and commit are bounded by the store's timeout
// on their own, so that a transaction that moves many bytes is not cut
// off by the time they take together.
func (s *Store) inTx(opts pgx.TxOptions, f func(exec func(string, ...any) error, query queryFunc) error) error {
	return s.txOn(s.pool, opts, f)
}

// txOn is inTx on db: the pool, or a connection of it.
func (s *Store) txOn(db interface {
	BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
}, opts pgx.TxOptions, f func(exec func(string, ...any) error, query queryFunc) error) error {
	ctx, cancel := s.opContext()
	tx, err := db.BeginTx(ctx, opts)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := s.opContext()
		defer cancel()
		tx.Rollback(ctx)
	}()
	exec := func(sql string, args ...any) error {
		ctx, cancel := s.opContext()
		defer cancel()
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}
	query := func(sql string, args ...any) (pgx.Rows, context.CancelFunc, error) {
		ctx, cancel := s.opContext()
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			cancel()
		}
		return rows, cancel, err
	}
	if err := f(exec, query); err != nil {
		return err
	}
	ctx, cancel = s.opContext()
	defer cancel()
	return tx.Commit(ctx)
}

// Blob returns the content stored under digest, checked against it. A
// read that meets a restart of the database is sent again on a new
// connection, so that a resume that fills a workspace goes on through it;
// a chunked blob's goes on from the chunk it reached (blobRead), and is
// sent again for as long as each try reads chunks, as putResumed writes.
// ErrNotFound for an unknown digest; a *CorruptBlobError, matching
// checkpoint.ErrCorrupt, for a row that does not match its digest, or
// chunks missing, out of place or of the wrong size.
func (s *Store) Blob(digest string) ([]byte, error) {
	r := &blobRead{digest: digest}
	var err error
	for {
		reached := r.next
		err = s.retryLong(idempotent, func() error {
			return s.inTx(pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
				func(_ func(string, ...any) error, query queryFunc) error { return r.read(query) })
		})
		if err == nil || r.next == reached || !idempotent(err) {
			break
		}
	}
	var cbe *CorruptBlobError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("blob %s: %w", digest, checkpoint.ErrNotFound)
	case errors.Is(err, errUnfinished):
		return nil, fmt.Errorf("blob %s: %w: its write has not finished (under way, or cut off with its process): "+
			"store the blob again to finish it (an import of an export that holds it, or a run that stores the same file)",
			digest, checkpoint.ErrNotFound)
	case errors.As(err, &cbe):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("blob %s: %w", digest, wrapConn(err))
	}
	return r.out, nil
}

// blobRead is a blob's read, which a try cut off (a restart of the
// database) leaves where it reached: a chunked blob's bytes read so far,
// their running SHA-256 and the next chunk. The next try reads the row
// again and goes on from there, in a snapshot of its own; what it reads
// is checked with what was read before, as a whole, against the digest
// and the size, as one read would be. A row that says other than it did
// (its size or chunks repaired meanwhile) starts the read again from
// chunk 0.
type blobRead struct {
	digest string
	size   int64 // the row's size and chunks, once read
	n      int
	out    []byte
	h      hash.Hash
	next   int // the next chunk to read
}

// read reads the blob's row and, if it has them, its chunks from the one
// reached, and checks what it read against the digest.
func (r *blobRead) read(query queryFunc) error {
	var data []byte
	var size *int64
	var chunks int32
	var whole bool
	rows, cancel, err := query(`SELECT data, size, chunks, whole FROM cairn_blobs WHERE digest = $1`, r.digest)
	if err != nil {
		return err
	}
	found := false
	_, err = pgx.ForEachRow(rows, []any{&data, &size, &chunks, &whole}, func() error { found = true; return nil })
	cancel()
	switch {
	case err != nil:
		return err
	case !found:
		return pgx.ErrNoRows
	case !whole:
		return errUnfinished
	case chunks == 0:
		if checkpoint.BlobDigest(data) != r.digest {
			return corruptBlob(r.digest, "")
		}
		r.out = data
		return nil
	case chunks < 0 || size == nil || *size < 0 || len(data) > 0:
		return corruptBlob(r.digest, fmt.Sprintf("its row in cairn_blobs says neither where its bytes are nor how many (%d chunks)", chunks))
	}
	if r.h == nil || r.size != *size || r.n != int(chunks) {
		// Room for what its chunks can hold, not for what its row claims:
		// a size damaged in the row is found once they are read, and must
		// not reserve gigabytes first.
		r.size, r.n, r.next, r.h = *size, int(chunks), 0, sha256.New()
		r.out = make([]byte, 0, min(r.size, int64(r.n)*int64(blobChunk), 1<<31))
	}
	if blobReadHook != nil {
		blobReadHook()
	}
	return r.readChunks(query)
}

// readChunks reads the blob's chunks from the one reached, a few a
// statement, hashing them as they come, and checks the whole once the
// last is read.
func (r *blobRead) readChunks(query queryFunc) error {
	digest, n, size := r.digest, r.n, r.size
	for r.next < n {
		if blobChunksReadHook != nil {
			blobChunksReadHook(r.next)
		}
		rows, cancel, err := query(`SELECT idx, data FROM cairn_blob_chunks WHERE digest = $1 AND idx >= $2 ORDER BY idx LIMIT $3`,
			digest, r.next, chunksARead)
		if err != nil {
			return err
		}
		var idx int32
		var chunk []byte
		from := r.next
		_, err = pgx.ForEachRow(rows, []any{&idx, &chunk}, func() error {
			switch {
			case int(idx) != r.next:
				return corruptBlob(digest, fmt.Sprintf("chunk %d of its %d is missing from cairn_blob_chunks", r.next, n))
			case int64(len(r.out)+len(chunk)) > size:
				return corruptBlob(digest, fmt.Sprintf("its chunks in cairn_blob_chunks hold more than its %d bytes", size))
			}
			r.h.Write(chunk)
			r.out = append(r.out, chunk...)
			r.next++
			return nil
		})
		cancel()
		if err != nil {
			return err
		}
		if r.next == from {
			return corruptBlob(digest, fmt.Sprintf("chunk %d of its %d is missing from cairn_blob_chunks", r.next, n))
		}
	}
	if int64(len(r.out)) != size {
		return corruptBlob(digest, fmt.Sprintf("its %d chunks in cairn_blob_chunks hold %d bytes of its %d", n, len(r.out), size))
	}
	if "sha256:"+hex.EncodeToString(r.h.Sum(nil)) != digest {
		return corruptBlob(digest, "its chunks in cairn_blob_chunks do not match its digest")
	}
	return nil
}

func corruptBlob(digest, what string) *CorruptBlobError {
	reason := what
	if reason == "" {
		reason = "content does not match its digest"
	}
	return &CorruptBlobError{Digest: digest, what: what,
		err: &checkpoint.CorruptError{File: "blob " + digest + " in cairn_blobs", Reason: reason}}
}
