package pgstore

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Every write of the store goes through retry (but the lease's renewal,
// which its next tick tries again), under one of two rules that say which
// failures leave it safe to send again. A restart of the
// database cuts every connection: a write that meets it is sent again on
// a new connection, with a growing pause between tries, until the
// store's timeout, so that a restart pauses the writer rather than
// failing it. The reads a run or a resume goes on from (the state of the
// agent it holds, whether an agent exists, a blob) are sent again as
// idempotent writes are;
// other reads are not: a failed read changes nothing, and its caller is
// told the database is unavailable.

// retryRule reports whether a write that failed with err may be sent
// again.
type retryRule func(err error) bool

// notRun is the rule of a write that must not be run twice — a journal
// append, an event line, a delete whose count is
// reported: it is sent again only if it was certainly not committed. It
// never reached the server (no connection could be made, or the write
// failed), or the server answered it with the notice of a fast shutdown
// (SQLSTATE 57P01), which a backend gives in place of a transaction's
// results only if it ends before committing it — as a connection that sat
// idle in the pool through a restart does.
func notRun(err error) bool {
	var pgErr *pgconn.PgError
	var ce *pgconn.ConnectError
	return pgconn.SafeToRetry(err) || errors.As(err, &ce) || errors.As(err, &pgErr) && pgErr.Code == "57P01"
}

// idempotent is the rule of a write that leaves the database as it is,
// and answers the same, whether it runs once or twice — an upsert, an
// UPDATE that sets a value: it is sent again after any failure of the
// connection, even one after which it may have been committed.
func idempotent(err error) bool {
	return errors.Is(wrapConn(err), ErrUnavailable)
}

// retry runs try, and again after each failure again allows, until the
// store's timeout.
func (s *Store) retry(again retryRule, try func() error) error {
	deadline := time.Now().Add(s.timeout)
	err := try()
	for pause := 50 * time.Millisecond; err != nil && again(err) && time.Now().Add(pause).Before(deadline); pause = min(2*pause, time.Second) {
		s.pool.Reset() // its other connections went with the server
		time.Sleep(pause)
		err = try()
	}
	return err
}

// retryLong is retry of a write or read that may take longer than the
// store's timeout (a chunked blob's, each of whose statements that
// timeout bounds): its tries again are allowed for the store's timeout
// from the end of its first try, not from its start, so that a restart of
// the database late in a long transfer is tried again as one early in it
// is. A second failure after that is the caller's to report.
func (s *Store) retryLong(again retryRule, try func() error) error {
	err := try()
	if err == nil || !again(err) {
		return err
	}
	first := true
	return s.retry(again, func() error {
		if first {
			first = false
			return err
		}
		return try()
	})
}

// sendRetry sends a batch as one transaction, again as the rule allows,
// and returns the rows each statement affected.
func (s *Store) sendRetry(b *pgx.Batch, again retryRule) ([]int64, error) {
	var tags []int64
	next := b
	err := s.retry(again, func() error {
		var err error
		tags, err = s.sendOnce(next)
		next = requeue(b)
		return err
	})
	return tags, err
}

// exec runs one statement as a write of its own under the rule, behind
// the check of the schema's version (schemaCheckSQL) in the same batch,
// and returns the rows it affected. A schema newer than this build's is a
// *checkpoint.FutureSchemaError, with nothing written; a failure of the
// connection is ErrUnavailable.
func (s *Store) exec(again retryRule, sql string, args ...any) (int64, error) {
	b := &pgx.Batch{}
	b.Queue(schemaCheckSQL, s.version)
	b.Queue(sql, args...)
	tags, err := s.sendRetry(b, again)
	if fe := futureSchema(err, s.version); fe != nil {
		return 0, fe
	}
	if err != nil {
		return 0, wrapConn(err)
	}
	return tags[1], nil
}

// schemaCheckSQL starts every write that no lease fences (a blob, a
// bookmark, a memory fact, a pause request, gc's removals): it fails the
// transaction as the fence does, with SQLSTATE CF002 and the version
// found, when the schema is newer than the one this build writes ($1),
// and does nothing otherwise. It calls the fence only then, whose first
// step is that check (migrations/0008_fence_version.sql), so it needs no
// function of its own. Sent in the write's batch, it costs no round trip.
const schemaCheckSQL = `SELECT CASE WHEN (SELECT max(version) FROM cairn_schema) > $1::integer
	THEN cairn_fence('', 0, 0, $1::integer) END`
