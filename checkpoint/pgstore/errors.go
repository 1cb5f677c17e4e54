package pgstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnrun/cairn/checkpoint"
)

// Errors a caller branches on.
var (
	// ErrFenced is matched by a *FencedError. A *FencedError also matches
	// checkpoint.ErrLocked: another process has the agent now.
	ErrFenced = errors.New("lease was taken over")
	// ErrUnavailable is a write or read the database did not answer: it
	// is down, restarting, or out of reach. A write that fails so may or
	// may not have been committed; the store says which on the next Read.
	ErrUnavailable = errors.New("database unavailable")
	// ErrNoLease is a write of an agent whose lease this Store does not
	// hold: take it with Lock first.
	ErrNoLease = errors.New("no lease held on the agent")
	// ErrBadURL: the store's URL or connection string cannot be read
	// (its syntax, sslmode, lease_ttl); nothing was connected to.
	ErrBadURL = errors.New("bad PostgreSQL URL")
	// ErrBadNamespace: WithNamespace named no namespace that can be one
	// (see checkpoint.CheckNamespace); nothing was connected to.
	ErrBadNamespace = errors.New("bad namespace")
)

// FencedError is a write refused because the writer's lease is no longer
// held at its epoch: it expired and another process took the agent (or
// the workflow), or it was released. Nothing of the write was applied, and
// no later write of this holder will be.
type FencedError struct {
	Agent string // the lease's id: an agent's, or a workflow's
	// Workflow says the lease is a workflow's (its record's write was
	// refused), not an agent's.
	Workflow bool
	Epoch    int64 // the epoch the writer held
	// Now is who holds the agent now and at which epoch; zero Holder when
	// no one does.
	Now      checkpoint.Holder
	NowEpoch int64
	// RowGone says the lease's row is not in cairn_leases: deleted (by
	// hand, to revoke the lease, or by a restore that left it out), and
	// not made again by a take since.
	RowGone bool
	// Unread is why the lease row could not be read once the fence had
	// refused the write (the database went away between the two): who
	// holds the lease now is not known, and Now and NowEpoch are zero.
	Unread error
}

func (e *FencedError) Error() string {
	h, what := e.Now, "agent"
	again := fmt.Sprintf("`cairn resume %s`", e.Agent)
	if e.Workflow {
		what = "workflow"
		again = fmt.Sprintf("`cairn workflow resume %s`", e.Agent)
	}
	if e.Unread != nil {
		return fmt.Sprintf("%s %q: a write was refused by its lease's fence: this process's lease (epoch %d) is held no more "+
			"(it expired and another process took the %s, or it was taken with --steal, released, or its row deleted), "+
			"and who holds the %s now could not be read (%v); nothing more was committed here: "+
			"to go on, take it again with %s once the database answers (refused, naming the holder, while another process has it)",
			what, e.Agent, e.Epoch, what, what, e.Unread, again)
	}
	switch {
	case e.NowEpoch > e.Epoch && h.PID != 0:
		return fmt.Sprintf("%s %q was taken over by process %d on %s (run %s, epoch %d) after this process's lease (epoch %d) expired or was taken with --steal; nothing more was committed here",
			what, e.Agent, h.PID, h.Host, h.Run, e.NowEpoch, e.Epoch)
	case e.NowEpoch > e.Epoch:
		return fmt.Sprintf("%s %q was taken over by another process (epoch %d, since released) after this process's lease (epoch %d) expired or was taken with --steal; nothing more was committed here",
			what, e.Agent, e.NowEpoch, e.Epoch)
	}
	if e.RowGone {
		return fmt.Sprintf("%s %q: its lease row is gone from cairn_leases (deleted by hand to revoke the lease, or left out of a restore), "+
			"so this process's lease (epoch %d) is held no more; nothing more was committed here: to go on, take it again with %s",
			what, e.Agent, e.Epoch, again)
	}
	return fmt.Sprintf("%s %q: this process's lease (epoch %d) was released; nothing more was committed", what, e.Agent, e.Epoch)
}

// Is makes errors.Is hold for ErrFenced, checkpoint.ErrLocked and
// checkpoint.ErrLockLost.
func (e *FencedError) Is(target error) bool {
	return target == ErrFenced || target == checkpoint.ErrLocked || target == checkpoint.ErrLockLost
}

// SchemaError is a schema version table that no cairn leaves: a negative
// version, more than one row, none beside cairn's tables, a version
// behind the tables the database has, or one whose tables are missing. Open refuses it before anything is
// written — migrating from a wrong version would fail or do harm — and
// says how to mend it. It matches checkpoint.ErrCorrupt.
type SchemaError struct {
	Table     string // the version table: cairn_schema, qualified in a namespace
	Found     string // what it holds: "version -1", "no version row"
	Reason    string // why that cannot be
	Supported int    // the version this build makes
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("the database's cairn schema is damaged: %s holds %s, %s; nothing was changed — "+
		"restore the database from a backup, or, if only that table is wrong, make it hold the one row of "+
		"the version the last cairn to open the database made (this cairn's is %d)",
		e.Table, e.Found, e.Reason, e.Supported)
}

// Is makes errors.Is(err, checkpoint.ErrCorrupt) hold.
func (e *SchemaError) Is(target error) bool { return target == checkpoint.ErrCorrupt }

// CorruptRowError is an agent's row that does not decode, or a journal
// row that is missing. It speaks of a table and a row, where the
// *checkpoint.CorruptError it wraps (errors.As finds it, and
// errors.Is(err, checkpoint.ErrCorrupt) holds) speaks of a file and an
// offset, and its advice fits a database: there is no file to restore or
// agent directory to move aside.
type CorruptRowError struct {
	Agent string
	Table string // cairn_journal, cairn_agents, cairn_past or cairn_events
	Row   string // "row seq 58", "snapshot", "row round 3", "row label \"v1\""
	err   *checkpoint.CorruptError
	key   string // a bookmark's label, for the advice
}

// corruptRow is the *CorruptRowError of the agent's row in table.
func corruptRow(agent, table, row, reason string) *CorruptRowError {
	return &CorruptRowError{Agent: agent, Table: table, Row: row,
		err: &checkpoint.CorruptError{File: row + " of agent " + agent + " in " + table, Reason: reason}}
}

func (e *CorruptRowError) Error() string {
	advice := "give the agent up by deleting its rows from cairn_journal, cairn_past and cairn_agents"
	switch e.Table {
	case "cairn_events":
		advice = "delete that row of cairn_events: the agent's event history loses its lines, the agent nothing"
	case "cairn_bookmarks":
		advice = fmt.Sprintf("delete that row (DELETE FROM cairn_bookmarks WHERE agent = %s AND label = %s): "+
			"the agent loses that bookmark, nothing else", sqlString(e.Agent), sqlString(e.key))
	}
	return fmt.Sprintf("agent %q is corrupt in the database: %s in %s: %s; nothing was changed — "+
		"restore a backup of the database, or %s", e.Agent, e.Row, e.Table, e.err.Reason, advice)
}

func (e *CorruptRowError) Unwrap() error { return e.err }

// CorruptBlobError is a row of cairn_blobs whose bytes do not match its
// digest. It speaks of the database where the *checkpoint.CorruptError it
// wraps (errors.As finds it, and errors.Is(err, checkpoint.ErrCorrupt)
// holds) speaks of a file: the row is repaired by storing the blob again
// (PutBlob gives a row that does not hold its bytes the right ones).
type CorruptBlobError struct {
	Digest string
	err    *checkpoint.CorruptError
	what   string // what is wrong, when more than a row that does not match its digest
}

func (e *CorruptBlobError) Error() string {
	what := e.what
	if what == "" {
		what = "its row in cairn_blobs does not match its digest"
	}
	return fmt.Sprintf("blob %s is corrupt in the database: %s; nothing was changed — "+
		"storing the blob again repairs the row (`cairn import` of an export that holds it, or a run that stores the same file), "+
		"or restore the database from a backup", e.Digest, what)
}

func (e *CorruptBlobError) Unwrap() error { return e.err }

// missingTableError is a statement that found one of cairn's tables
// missing, in a database that Open found set up (cairn_schema names the
// version that made them all): a table dropped by hand, or a restore
// that left it out. It matches checkpoint.ErrCorrupt.
type missingTableError struct{ err *pgconn.PgError }

func (e *missingTableError) Error() string {
	return fmt.Sprintf("the database's cairn schema is damaged: %s, though cairn_schema says it was made; "+
		"nothing was changed — restore the database (or that table) from a backup", e.err.Message)
}

func (e *missingTableError) Unwrap() error        { return e.err }
func (e *missingTableError) Is(target error) bool { return target == checkpoint.ErrCorrupt }

// fenceCode is the SQLSTATE cairn_fence raises.
const fenceCode = "CF001"

func isFence(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == fenceCode
}

// futureCode is the SQLSTATE cairn_fence raises, with the version it found
// as its detail, when the schema is newer than the writer's: another node
// migrated the database after this one opened it.
const futureCode = "CF002"

// futureSchema is the *checkpoint.FutureSchemaError of a write that the
// fence refused for a schema newer than version, the one this build
// writes; nil for any other error.
func futureSchema(err error, version int) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != futureCode {
		return nil
	}
	found, _ := strconv.Atoi(pgErr.Detail)
	return &checkpoint.FutureSchemaError{File: "the database's cairn schema", Version: found, Supported: version}
}

// unavailableError is a failure of the connection rather than of the
// statement.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string {
	return "database unavailable (" + e.err.Error() + "); check that PostgreSQL is running and reachable, then try again (a run stopped by it: cairn resume)"
}
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// wrapConn marks err as ErrUnavailable when the server did not answer a
// statement: a connection error, or the server shutting down or starting.
func wrapConn(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 08: connection exception; 57P: operator intervention (shutdown,
		// crash, cannot connect now).
		if strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") {
			return &unavailableError{err}
		}
		if pgErr.Code == "42P01" { // undefined_table
			return &missingTableError{pgErr}
		}
		if pgErr.Code == "55P03" { // lock_not_available: lock_timeout passed
			return &rowLockedError{Row: "a row of cairn's tables", err: pgErr}
		}
		if pgErr.Code == "57014" && strings.Contains(pgErr.Message, "statement timeout") { // query_canceled
			return &statementTimeoutError{pgErr}
		}
		if pgErr.Code == "57014" && strings.Contains(pgErr.Message, "user request") {
			return &cancelledError{pgErr}
		}
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isNetErr(err) {
		return &unavailableError{err}
	}
	return err
}

func isNetErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// statementTimeoutError is a statement the server cancelled at its
// statement_timeout, set in the store's URL or for cairn's role or
// database: a wait for a row another session holds, or a statement that
// moves many bytes. Its transaction was rolled back whole. The database
// answers, so it is not ErrUnavailable, and it is not sent again.
type statementTimeoutError struct{ err *pgconn.PgError }

func (e *statementTimeoutError) Error() string {
	return "the server cancelled a statement at its statement_timeout (set in the store's URL, or for cairn's role or " +
		"database): its transaction changed nothing — cairn bounds every statement itself (the store's timeout, and " +
		"lock_timeout for a row another session holds), so remove statement_timeout from the URL, or clear it for cairn's " +
		"role (ALTER ROLE name SET statement_timeout = 0), then try again"
}

func (e *statementTimeoutError) Unwrap() error { return e.err }

// cancelledError is a statement cancelled on the server by a request
// that is not cairn's (pg_cancel_backend, or another client's cancel:
// cairn ends a statement past its timeout by closing its connection,
// never by a cancel request). Its transaction was rolled back whole. It
// is not sent again: someone meant it to stop.
type cancelledError struct{ err *pgconn.PgError }

func (e *cancelledError) Error() string {
	return "the server cancelled a statement at the request of someone else (pg_cancel_backend, or another client's " +
		"cancel request): its transaction changed nothing — try again once whatever it was cancelled for is settled " +
		"(a run or a resume stopped so goes on with `cairn resume`)"
}

func (e *cancelledError) Unwrap() error { return e.err }

// lostRowsError refuses an agent whose journal rows end before where they
// were durable (cairn_agents.durable): rows deleted from its end, by hand
// or by a restore of an older backup of cairn_journal alone. Loading what
// is left would run committed rounds again over a workspace that already
// has their changes, so nothing is loaded and nothing is changed.
type lostRowsError struct {
	Agent string
	// End is the sequence number after the last row found; Durable the
	// one the agent's row says was reached; Round the boundary the rows
	// found reach.
	End, Durable int64
	Round        int
}

func (e *lostRowsError) Error() string {
	return fmt.Sprintf("agent %q has lost committed data: its rows in cairn_journal end before row seq %d, "+
		"but rows to seq %d were durable (cairn_agents.durable), and what is left reaches round %d; "+
		"nothing was loaded or changed, and resuming cannot repair it: restore the database from a backup, "+
		"fork a bookmark of the agent (`cairn fork`), or start it over with `cairn run --fresh`",
		e.Agent, e.End, e.Durable-1, e.Round)
}

// Is makes errors.Is(err, checkpoint.ErrLost) hold.
func (e *lostRowsError) Is(target error) bool { return target == checkpoint.ErrLost }

// lostTail reports whether a journal write failed because the row it
// follows is gone (see pgLog.write): the seq of its first row, or the
// durable mark, came out NULL.
func lostTail(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23502" && // not_null_violation
		(pgErr.TableName == "cairn_journal" && pgErr.ColumnName == "seq" ||
			pgErr.TableName == "cairn_agents" && pgErr.ColumnName == "durable")
}

// lostTailError is a journal write refused because rows this process had
// appended are gone: the server crashed (or was stopped with -m immediate)
// before it wrote them out, as appends are committed without waiting for
// its disk. Nothing of the write was applied. What was committed durably
// is all there; the rounds in progress lost records, so the run stops and
// a resume goes on from what the database kept. It matches ErrUnavailable.
type lostTailError struct {
	Agent string
	Seq   int64 // the last row this process had appended
}

func (e *lostTailError) Error() string {
	return fmt.Sprintf("database unavailable: the server lost records of agent %q it had not yet written to disk "+
		"(it crashed, or was stopped with -m immediate; row seq %d is gone): nothing more was written here, and every "+
		"committed round is kept — check that PostgreSQL is running, then resume the agent (cairn resume)", e.Agent, e.Seq)
}

func (e *lostTailError) Is(target error) bool { return target == ErrUnavailable }

// rowLockedError is a write that waited past lock_timeout (a third of the
// store's timeout, unless the URL sets it) for a row another session of
// the database holds: a transaction that has not ended, such as that of
// a writer whose node went down in the middle of sending it, whose server
// process waits for the rest, or one left open by hand. The database
// answers, so it is not ErrUnavailable; nothing of the write was applied.
type rowLockedError struct {
	Row string // "the lease row of agent "a1""
	// Sessions names the sessions whose transaction had been open longer
	// than the wait, one of which holds the row; "" when unknown.
	Sessions string
	err      *pgconn.PgError
}

func (e *rowLockedError) Error() string {
	who := "find it in pg_stat_activity (the oldest xact_start)"
	if e.Sessions != "" {
		who = "it is one of the sessions whose transaction was open longer: " + e.Sessions
	}
	return fmt.Sprintf("%s stayed locked by another session of the database past lock_timeout: a transaction that holds it "+
		"has not ended (the server process of a writer cut off in the middle of a write waits for the rest of it, "+
		"or a transaction was left open by hand); nothing was changed — %s; end it with SELECT pg_terminate_backend(pid), then try again",
		e.Row, who)
}

func (e *rowLockedError) Unwrap() error { return e.err }

// MemoryRowError is a row of cairn_memory that does not decode, or whose
// bytes do not match its checksum. It wraps a *checkpoint.CorruptError
// (errors.Is(err, checkpoint.ErrCorrupt) holds), and speaks of the row,
// with advice that fits a database.
type MemoryRowError struct {
	Namespace, Key string
	err            *checkpoint.CorruptError
}

func (e *MemoryRowError) Error() string {
	return fmt.Sprintf("memory %s is corrupt in the database: row key %q in cairn_memory: %s; nothing was changed — "+
		"restore a backup of the database, or delete that row (DELETE FROM cairn_memory WHERE namespace = %s AND key = %s): "+
		"the namespace forgets that fact, nothing else", e.Namespace, e.Key, e.err.Reason, sqlString(e.Namespace), sqlString(e.Key))
}

func (e *MemoryRowError) Unwrap() error { return e.err }

// sqlString is s as an SQL string literal, for advice that quotes a
// statement to run.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
