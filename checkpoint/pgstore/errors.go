package pgstore

import (
	"errors"
	"fmt"
	"io"
	"net"
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
)

// FencedError is a write refused because the writer's lease is no longer
// held at its epoch: it expired and another process took the agent, or it
// was released. Nothing of the write was applied, and no later write of
// this holder will be.
type FencedError struct {
	Agent string
	Epoch int64 // the epoch the writer held
	// Now is who holds the agent now and at which epoch; zero Holder when
	// no one does.
	Now      checkpoint.Holder
	NowEpoch int64
}

func (e *FencedError) Error() string {
	h := e.Now
	switch {
	case e.NowEpoch > e.Epoch && h.PID != 0:
		return fmt.Sprintf("agent %q was taken over by process %d on %s (run %s, epoch %d) after this process's lease (epoch %d) expired; nothing more was committed here",
			e.Agent, h.PID, h.Host, h.Run, e.NowEpoch, e.Epoch)
	case e.NowEpoch > e.Epoch:
		return fmt.Sprintf("agent %q was taken over by another process (epoch %d, since released) after this process's lease (epoch %d) expired; nothing more was committed here",
			e.Agent, e.NowEpoch, e.Epoch)
	}
	return fmt.Sprintf("agent %q: this process's lease (epoch %d) was released; nothing more was committed", e.Agent, e.Epoch)
}

// Is makes errors.Is hold for ErrFenced and checkpoint.ErrLocked.
func (e *FencedError) Is(target error) bool {
	return target == ErrFenced || target == checkpoint.ErrLocked
}

// fenceCode is the SQLSTATE cairn_fence raises.
const fenceCode = "CF001"

func isFence(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == fenceCode
}

// unavailableError is a failure of the connection rather than of the
// statement.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string {
	return "database unavailable (" + e.err.Error() + "); check that PostgreSQL is running and reachable, then resume the agent"
}
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// wrapConn marks err as ErrUnavailable when the server did not answer a
// statement: a connection error, or the server shutting down or starting.
func wrapConn(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 08: connection exception; 57P: operator intervention (shutdown,
		// crash, cannot connect now).
		if strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") {
			return &unavailableError{err}
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
