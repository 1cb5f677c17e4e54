package pgstore

import (
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// checkpoint.Retention.Rounds keeps only the last rounds of an agent's
// event history and pasts, as the file store does (see rounds_trim.go in
// package checkpoint): the pasts kept start at the boundary before the
// oldest round kept, whose row is given the whole workspace there (a
// manifest blob, stored first) and marked Trimmed; the history loses its
// rows before the line it keeps first, and the row that line is in
// starts with the warning that says so (checkpoint.TrimmedEvents), which
// counts the lines removed so that the HTTP API numbers the lines kept
// as before. Both are changed in one transaction, fenced on the agent's
// lease, which gc holds: a trim that fails, or whose connection is cut,
// changes nothing, and the next gc trims.

// roundsPlan is what a trim of an agent changes: nil when nothing.
type roundsPlan struct {
	first int // the oldest round kept

	// kept are the pasts kept, the floor's first (nil when they stay),
	// manifest the floor's workspace manifest to store before it, and
	// pastCut how many bytes the rows lose.
	kept     []checkpoint.Past
	manifest []byte
	pastCut  int64
	base     string // the state's WorkspaceBase

	// seq is the row of the history the first line kept is in, head
	// that row's bytes as trimmed (the warning, then its bytes from that
	// line on); eventsCut how many bytes the history loses. head is nil
	// when the history stays.
	seq       int64
	head      []byte
	eventsCut int64
}

// trimHook, when set (by a test), is given the trim's transaction between
// the pasts' statements and the history's.
var trimHook func(b *pgx.Batch)

// planRounds plans the trim of agent id to its last rounds rounds,
// reading its state, pasts and history and writing nothing.
func (s *Store) planRounds(id string, rounds int) (*roundsPlan, error) {
	rec, err := s.Read(id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	floor := rec.State.Round - rounds
	if floor < 1 {
		return nil, nil
	}
	p := &roundsPlan{first: floor + 1, base: rec.State.WorkspaceBase}
	all, err := s.Pasts(id)
	if err != nil {
		return nil, fmt.Errorf("the pasts of its rounds: %w", err)
	}
	if kept, manifest, ok := checkpoint.KeptPasts(s, all, id, floor); ok {
		p.kept, p.manifest = kept, manifest
		if p.pastCut, err = s.pastBytesCut(id, kept[0]); err != nil {
			return nil, fmt.Errorf("the pasts of its rounds: %w", err)
		}
	}
	if err := p.planEvents(s, id); err != nil {
		return nil, fmt.Errorf("its event history: %w", err)
	}
	if p.kept == nil && p.head == nil {
		return nil, nil
	}
	return p, nil
}

// pastBytesCut is how many bytes the agent's rows of cairn_past lose when
// floor is the oldest kept.
func (s *Store) pastBytesCut(id string, floor checkpoint.Past) (int64, error) {
	data, err := checkpoint.EncodePast(floor)
	if err != nil {
		return 0, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	var n int64
	err = s.pool.QueryRow(ctx, `SELECT coalesce(sum(octet_length(data)), 0) FROM cairn_past WHERE agent = $1 AND round <= $2`,
		id, floor.Round).Scan(&n)
	return n - int64(len(data)), wrapConn(err)
}

// planEvents plans the history without its lines before the oldest round
// kept. The rows are read one at a time, never the whole history at once.
func (p *roundsPlan) planEvents(s *Store, id string) error {
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT seq, data, crc FROM cairn_events WHERE agent = $1 ORDER BY seq`, id)
	if err != nil {
		return wrapConn(err)
	}
	r := &eventRows{rows: rows, agent: id}
	notice, off, err := checkpoint.HistoryCut(r, id, p.first)
	rows.Close()
	if err == nil {
		err = r.err
	}
	if err != nil || notice == nil {
		return err
	}
	var row eventRow
	var upto int64
	err = s.pool.QueryRow(ctx, `SELECT seq, data, crc, upto FROM (
		SELECT seq, data, crc, sum(octet_length(data)) OVER (ORDER BY seq) AS upto
		FROM cairn_events WHERE agent = $1) t
		WHERE upto > $2 ORDER BY seq LIMIT 1`, id, off).Scan(&row.Seq, &row.Data, &row.Sum, &upto)
	if err != nil {
		return wrapConn(err)
	}
	if err := row.check(id); err != nil {
		return err
	}
	start := upto - int64(len(row.Data))
	p.seq = row.Seq
	p.head = append(notice, row.Data[off-start:]...)
	p.eventsCut = off - int64(len(notice))
	return nil
}

// eventRows reads the bytes of an agent's rows of cairn_events in order,
// each checked against its checksum.
type eventRows struct {
	rows  pgx.Rows
	agent string
	buf   []byte
	err   error // why the rows could not be read, or a row was damaged
}

func (r *eventRows) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if !r.rows.Next() {
			if err := r.rows.Err(); err != nil {
				r.err = wrapConn(err)
				return 0, r.err
			}
			return 0, io.EOF
		}
		var row eventRow
		if err := r.rows.Scan(&row.Seq, &row.Data, &row.Sum); err != nil {
			r.err = wrapConn(err)
			return 0, r.err
		}
		if err := row.check(r.agent); err != nil {
			r.err = err
			return 0, err
		}
		r.buf = row.Data
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// mark marks the blobs the agent's pasts name once the plan trimmed them.
func (p *roundsPlan) mark(s *Store, id string, inUse map[string]bool) error {
	if p == nil || p.kept == nil {
		return checkpoint.MarkPasts(s, id, inUse)
	}
	return checkpoint.MarkKeptPasts(s, p.kept, p.manifest, p.base, inUse)
}

// trim writes what the plan trims of agent id, in one transaction fenced
// on l, the agent's lease: the floor's manifest first, a blob of its own.
func (p *roundsPlan) trim(s *Store, l *lease) error {
	if p.manifest != nil {
		if _, err := s.PutBlob(p.manifest); err != nil {
			return err
		}
	}
	b := s.fence(l, &pgx.Batch{})
	if p.kept != nil {
		floor := p.kept[0]
		data, err := checkpoint.EncodePast(floor)
		if err != nil {
			return err
		}
		b.Queue(`DELETE FROM cairn_past WHERE agent = $1 AND round < $2`, l.agent, floor.Round)
		b.Queue(`UPDATE cairn_past SET data = $3, crc = $4 WHERE agent = $1 AND round = $2`, l.agent, floor.Round, data, sum(data))
	}
	if trimHook != nil {
		trimHook(b)
	}
	if p.head != nil {
		b.Queue(`DELETE FROM cairn_events WHERE agent = $1 AND seq < $2`, l.agent, p.seq)
		b.Queue(`UPDATE cairn_events SET data = $3, crc = $4 WHERE agent = $1 AND seq = $2`, l.agent, p.seq, p.head, sum(p.head))
	}
	_, err := s.send(l, b)
	return err
}

// report counts what the plan trims (or, in a dry run, would trim) of
// agent id in c.
func (p *roundsPlan) report(id string, c *checkpoint.Collected) {
	if p.kept != nil {
		c.Trimmed = append(c.Trimmed, checkpoint.Trimmed{Path: "cairn_past/" + id, Round: p.first, Bytes: p.pastCut})
		c.Bytes += p.pastCut
	}
	if p.head != nil {
		c.Trimmed = append(c.Trimmed, checkpoint.Trimmed{Path: "cairn_events/" + id, Round: p.first, Bytes: p.eventsCut})
		c.Bytes += p.eventsCut
	}
}
