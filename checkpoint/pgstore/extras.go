package pgstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// Events appends to the agent's event history. What is written waits in
// memory and goes to the database with the agent's next Sync or Commit,
// in the same transaction, or when the writer is closed: like the file
// store's history, it is not made durable line by line.
//
// The history is written by the agent's holder, behind its fence like
// every other write of the agent: a holder whose lease was taken over
// writes no more of it.
func (s *Store) Events(agent string) (io.WriteCloser, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return nil, err
	}
	s.mu.Lock()
	l := s.leases[agent]
	s.mu.Unlock()
	return &eventWriter{s: s, agent: agent, l: l}, nil
}

type eventWriter struct {
	s     *Store
	agent string
	l     *lease // the lease held when the writer was opened, if any
}

func (w *eventWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.events[w.agent] = append(w.s.events[w.agent], p...)
	return len(p), nil
}

// Close writes what is still waiting, fenced on the agent's lease: the
// lease this Store holds now, or else the one it held when the writer was
// opened, released since, which refuses it. A *FencedError when the lease
// was taken over or released, ErrNoLease when none was ever held: nothing
// is written then. The lines are appended as a row of their own, so they
// are sent again only if certainly not written: lines lost to a failure
// are better than lines twice.
func (w *eventWriter) Close() error {
	data := w.s.takeEvents(w.agent)
	if len(data) == 0 {
		return nil
	}
	l, err := w.s.held(w.agent)
	if err != nil && w.l != nil {
		l, err = w.l, nil
	}
	if err != nil {
		return fmt.Errorf("write event history: %w", err)
	}
	b := w.s.fence(l, &pgx.Batch{})
	b.Queue(`INSERT INTO cairn_events (agent, data, crc) VALUES ($1, $2, $3)`, w.agent, data, sum(data))
	if _, err := w.s.send(l, b); err != nil {
		return fmt.Errorf("write event history of agent %q: %w", w.agent, err)
	}
	return nil
}

// DropEvents deletes the agent's event history, what waits to be written
// of it too, fenced on the agent's lease, which the caller holds.
func (s *Store) DropEvents(agent string) error {
	l, err := s.held(agent)
	if err != nil {
		return err
	}
	s.takeEvents(agent)
	b := s.fence(l, &pgx.Batch{})
	b.Queue(`DELETE FROM cairn_events WHERE agent = $1`, agent)
	if _, err := s.send(l, b); err != nil {
		return fmt.Errorf("remove event history of agent %q: %w", agent, err)
	}
	return nil
}

// takeEvents takes the agent's waiting event lines.
func (s *Store) takeEvents(agent string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	data := s.events[agent]
	delete(s.events, agent)
	return data
}

// ReadEvents reads the agent's event history from its start. ErrNotFound
// when it has none.
func (s *Store) ReadEvents(agent string) (io.ReadCloser, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return nil, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT seq, data, crc FROM cairn_events WHERE agent = $1 ORDER BY seq`, agent)
	if err != nil {
		return nil, fmt.Errorf("read event history of agent %q: %w", agent, wrapConn(err))
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[eventRow])
	if err != nil {
		return nil, fmt.Errorf("read event history of agent %q: %w", agent, wrapConn(err))
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("event history of agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	var out []byte
	for _, r := range got {
		if err := r.check(agent); err != nil {
			return nil, err
		}
		out = append(out, r.Data...)
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}

// eventRow is a row of cairn_events as read.
type eventRow struct {
	Seq  int64
	Data []byte
	Sum  *int64
}

// check refuses a row whose bytes do not match its checksum.
func (r eventRow) check(agent string) error {
	if sumMismatch(r.Sum, sum(r.Data)) {
		return corruptRow(agent, "cairn_events", fmt.Sprintf("row seq %d", r.Seq), badSum)
	}
	return nil
}

// PutBookmark keeps a bookmark of the agent, replacing one of the same
// label: an upsert, sent again after a failure of the connection.
// ErrNotFound for an unknown agent.
func (s *Store) PutBookmark(agent string, b checkpoint.Bookmark) error {
	data, err := checkpoint.EncodeBookmark(b)
	if err != nil {
		return err
	}
	n, err := s.exec(idempotent, `INSERT INTO cairn_bookmarks (agent, label, time, data, crc)
		SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM cairn_agents WHERE id = $1)
		ON CONFLICT (agent, label) DO UPDATE SET time = EXCLUDED.time, data = EXCLUDED.data, crc = EXCLUDED.crc`,
		agent, b.Label, b.Time, data, sum(data))
	if err != nil {
		return fmt.Errorf("bookmark agent %q: %w", agent, err)
	}
	if n == 0 {
		return fmt.Errorf("agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	return nil
}

// Bookmarks lists the agent's bookmarks, oldest first.
func (s *Store) Bookmarks(agent string) ([]checkpoint.Bookmark, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return nil, err
	}
	if !s.Exists(agent) {
		return nil, fmt.Errorf("agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	return s.bookmarks(agent)
}

// bookmarks lists the agent's bookmarks, whether or not it has state.
func (s *Store) bookmarks(agent string) ([]checkpoint.Bookmark, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT label, data, crc FROM cairn_bookmarks WHERE agent = $1 ORDER BY time, label`, agent)
	if err != nil {
		return nil, fmt.Errorf("bookmarks of agent %q: %w", agent, wrapConn(err))
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[bookmarkRow])
	if err != nil {
		return nil, fmt.Errorf("bookmarks of agent %q: %w", agent, wrapConn(err))
	}
	var out []checkpoint.Bookmark
	for _, r := range got {
		damaged := func(reason string) error {
			e := corruptRow(agent, "cairn_bookmarks", fmt.Sprintf("row label %q", r.Label), reason)
			e.key = r.Label
			return e
		}
		if sumMismatch(r.Sum, sum(r.Data)) {
			return nil, damaged(badSum)
		}
		b, err := checkpoint.DecodeBookmark(agent, r.Data)
		var ce *checkpoint.CorruptError
		if errors.As(err, &ce) {
			return nil, damaged(ce.Reason)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// bookmarkRow is a row of cairn_bookmarks as read.
type bookmarkRow struct {
	Label string
	Data  []byte
	Sum   *int64
}
