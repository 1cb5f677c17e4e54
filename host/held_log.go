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
