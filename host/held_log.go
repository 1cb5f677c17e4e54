package host

import (
	"errors"

	"github.com/cairnrun/cairn/checkpoint"
)

// heldLog is a run's journal that can hold records back: a held record
// is written with the next Append, Sync or Commit, in the same write (one
// system call, or one transaction on PostgreSQL), rather than alone. A
// record is held only where nothing between the hold and that next write
// must find it in the journal: the model's turn until its calls' executing
// records (a kill before them loses a turn no call of which has started,
// which resume asks the model for again), and the files a round read
// until its commit. A call's result is never held: a kill after the call
// finished must find it.
type heldLog struct {
	checkpoint.Log
	held []checkpoint.Record
}

// hold keeps recs for the next write.
func (l *heldLog) hold(recs ...checkpoint.Record) {
	l.held = append(l.held, recs...)
}

// with returns the held records followed by recs, and holds none.
func (l *heldLog) with(recs []checkpoint.Record) []checkpoint.Record {
	if len(l.held) == 0 {
		return recs
	}
	all := append(l.held, recs...)
	l.held = nil
	return all
}

func (l *heldLog) Append(recs ...checkpoint.Record) error { return l.Log.Append(l.with(recs)...) }

func (l *heldLog) Commit(recs ...checkpoint.Record) (int64, error) {
	return l.Log.Commit(l.with(recs)...)
}

// CommitLate is Commit that may return before the round is durable, and
// calls done once it is (checkpoint.LateCommitter).
func (l *heldLog) CommitLate(done func(error), recs ...checkpoint.Record) (int64, error) {
	return commitLate(l.Log, done, l.with(recs)...)
}

// Settle waits for the commit in flight, if any (checkpoint.LateCommitter).
func (l *heldLog) Settle() error { return settle(l.Log) }

// settle is log's Settle; a log that has none has no commit in flight.
func settle(log checkpoint.Log) error {
	if late, ok := log.(checkpoint.LateCommitter); ok {
		return late.Settle()
	}
	return nil
}

// commitLate commits recs through log's CommitLate where it has one; a
// log without commits at once and calls done before it returns.
func commitLate(log checkpoint.Log, done func(error), recs ...checkpoint.Record) (int64, error) {
	if late, ok := log.(checkpoint.LateCommitter); ok {
		return late.CommitLate(done, recs...)
	}
	n, err := log.Commit(recs...)
	if err == nil {
		done(nil)
	}
	return n, err
}

// Sync writes what is held, then makes everything durable.
func (l *heldLog) Sync() error {
	if err := l.flush(); err != nil {
		return err
	}
	return l.Log.Sync()
}

// Close writes what is held (as a kill would not: it is not durable)
// and closes the journal.
func (l *heldLog) Close() error { return errors.Join(l.flush(), l.Log.Close()) }

func (l *heldLog) flush() error {
	if len(l.held) == 0 {
		return nil
	}
	return l.Log.Append(l.with(nil)...)
}
