package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

var _ checkpoint.Timeline = (*Store)(nil)

// PutPast keeps a past boundary of the agent in cairn_past, replacing one
// of the same round. It is fenced on the lease like every write of the
// agent: the caller holds it. ErrNotFound when the agent has no state.
func (s *Store) PutPast(agent string, p checkpoint.Past) error {
	l, err := s.held(agent)
	if err != nil && !s.Exists(agent) {
		return fmt.Errorf("keep past of agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	if err != nil {
		return err
	}
	data, err := checkpoint.EncodePast(p)
	if err != nil {
		return err
	}
	b := s.fence(l, &pgx.Batch{})
	b.Queue(`INSERT INTO cairn_past (agent, round, data, crc)
		SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM cairn_agents WHERE id = $1)
		ON CONFLICT (agent, round) DO UPDATE SET data = EXCLUDED.data, crc = EXCLUDED.crc`, agent, p.Round, data, sum(data))
	n, err := s.send(l, b)
	if err != nil {
		return fmt.Errorf("keep past of agent %q: %w", agent, err)
	}
	if n[len(n)-1] == 0 {
		return fmt.Errorf("keep past of agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	return nil
}

// pastRow is a row of cairn_past as read.
type pastRow struct {
	Round int64
	Data  []byte
	Sum   *int64
}

// Pasts lists the agent's past boundaries by round.
//
// # Errors
//
// A *CorruptRowError naming the round of a row that does not decode, or
// whose round is not the one it holds.
func (s *Store) Pasts(agent string) ([]checkpoint.Past, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return nil, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT round, data, crc FROM cairn_past WHERE agent = $1 ORDER BY round`, agent)
	if err != nil {
		return nil, fmt.Errorf("pasts of agent %q: %w", agent, wrapConn(err))
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pastRow])
	if err != nil {
		return nil, fmt.Errorf("pasts of agent %q: %w", agent, wrapConn(err))
	}
	out := make([]checkpoint.Past, 0, len(got))
	for _, r := range got {
		p, err := decodePast(agent, r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// NewestPast reads the agent's past of the highest round, and no other.
// Its errors are those of Pasts.
func (s *Store) NewestPast(agent string) (checkpoint.Past, bool, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return checkpoint.Past{}, false, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	var r pastRow
	err := s.pool.QueryRow(ctx, `SELECT round, data, crc FROM cairn_past WHERE agent = $1 ORDER BY round DESC LIMIT 1`, agent).
		Scan(&r.Round, &r.Data, &r.Sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return checkpoint.Past{}, false, nil
	}
	if err != nil {
		return checkpoint.Past{}, false, fmt.Errorf("newest past of agent %q: %w", agent, wrapConn(err))
	}
	p, err := decodePast(agent, r)
	return p, err == nil, err
}

// decodePast decodes a row of cairn_past. One that does not decode is a
// *CorruptRowError naming the table and the round, with the advice a
// database's damage takes; one a newer cairn wrote, a
// *checkpoint.FutureSchemaError.
func decodePast(agent string, r pastRow) (checkpoint.Past, error) {
	if sumMismatch(r.Sum, sum(r.Data)) {
		return checkpoint.Past{}, corruptRow(agent, "cairn_past", fmt.Sprintf("row round %d", r.Round), badSum)
	}
	p, err := checkpoint.DecodePast(agent, r.Data)
	var ce *checkpoint.CorruptError
	switch {
	case errors.As(err, &ce):
		return p, corruptRow(agent, "cairn_past", fmt.Sprintf("row round %d", r.Round), ce.Reason)
	case err != nil:
		return p, err
	case int64(p.Round) != r.Round:
		return p, corruptRow(agent, "cairn_past", fmt.Sprintf("row round %d", r.Round),
			fmt.Sprintf("it holds the past of round %d", p.Round))
	}
	return p, nil
}
