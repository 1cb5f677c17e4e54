package pgstore

import (
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit: the writes of many agents of one process share
// transactions, as the file store's group commit shares fdatasyncs. The
// first writer to find no group in flight sends its write at once, alone;
// the writes that arrive meanwhile wait and go together in the next
// transaction, which the same writer sends. A group is durable (waits for
// the WAL flush) when any of its writes asks to be, and then makes all of
// them durable: a round trip and a flush for the lot. Each agent's
// statements keep their fence, so a fenced agent fails the whole group;
// the group is then sent again one write at a time, so that only the
// fenced one fails, as it would alone. So is a group that the server
// refused for any other cause of one write (its rows lost to a crash, its
// lease row held by a session that does not end).

// grouper holds the writes waiting for the next transaction.
type grouper struct {
	mu      sync.Mutex
	waiting []*groupWrite
	busy    bool // a writer is sending groups
}

// groupWrite is one agent's write: its fenced batch, and what came of it.
type groupWrite struct {
	l       *lease
	b       *pgx.Batch
	durable bool
	tags    []int64
	err     error
	done    chan struct{} // closed once tags and err are set
}

// sendGrouped sends b, an agent's fenced batch, in the next group.
func (s *Store) sendGrouped(l *lease, b *pgx.Batch, durable bool) ([]int64, error) {
	w := &groupWrite{l: l, b: b, durable: durable, done: make(chan struct{})}
	if s.alone {
		w.sendAlone(s, b)
		return w.tags, w.err
	}
	g := &s.group
	g.mu.Lock()
	g.waiting = append(g.waiting, w)
	if g.busy {
		// Another writer sends; it sends this one too, in a later group.
		g.mu.Unlock()
		<-w.done
		return w.tags, w.err
	}
	g.busy = true
	for len(g.waiting) > 0 {
		group := g.waiting
		g.waiting = nil
		g.mu.Unlock()
		s.sendGroup(group)
		for _, m := range group {
			close(m.done)
		}
		g.mu.Lock()
	}
	g.busy = false
	g.mu.Unlock()
	return w.tags, w.err
}

// sendGroup sends the writes in one transaction, or one by one if that
// fails.
func (s *Store) sendGroup(group []*groupWrite) {
	if len(group) == 1 {
		group[0].sendAlone(s, group[0].b)
		return
	}
	nb := &pgx.Batch{}
	durable := false
	for _, w := range group {
		durable = durable || w.durable
	}
	if !durable {
		nb.Queue(syncOff)
	}
	first := nb.Len()
	for _, w := range group {
		for _, q := range w.b.QueuedQueries {
			nb.Queue(q.SQL, q.Arguments...)
		}
	}
	tags, err := s.sendRetry(nb, notRun)
	switch {
	case refused(err):
		for _, w := range group {
			w.sendAlone(s, requeue(w.b))
		}
		return
	case err != nil:
		for _, w := range group {
			w.err = wrapConn(err)
		}
		return
	}
	at := first
	for _, w := range group {
		n := len(w.b.QueuedQueries)
		w.tags = tags[at : at+n]
		at += n
	}
}

// sendAlone sends the write in a transaction of its own.
func (w *groupWrite) sendAlone(s *Store, b *pgx.Batch) {
	w.tags, w.err = s.send(w.l, withDurability(b, w.durable))
	if w.err == nil && !w.durable {
		w.tags = w.tags[1:]
	}
}

// syncOff makes a transaction commit without waiting for the WAL flush.
const syncOff = `SELECT set_config('synchronous_commit', 'off', true)`

// withDurability is b, preceded by syncOff unless it is durable.
func withDurability(b *pgx.Batch, durable bool) *pgx.Batch {
	if durable {
		return b
	}
	nb := &pgx.Batch{}
	nb.Queue(syncOff)
	for _, q := range b.QueuedQueries {
		nb.Queue(q.SQL, q.Arguments...)
	}
	return nb
}

// refused reports whether the server answered a transaction with an
// error of its statements, not of the connection: it was rolled back
// whole, and its writes may be sent again.
func refused(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && !errors.Is(wrapConn(err), ErrUnavailable)
}
