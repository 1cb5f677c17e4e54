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
	b.Queue(`INSERT INTO cairn_past (agent, round, data)
		SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM cairn_agents WHERE id = $1)
		ON CONFLICT (agent, round) DO UPDATE SET data = EXCLUDED.data`, agent, p.Round, data)
	n, err := s.send(l, b)
	if err != nil {
		return fmt.Errorf("keep past of agent %q: %w", agent, err)
	}
	if n[len(n)-1] == 0 {
		return fmt.Errorf("keep past of agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	return nil
}

// Pasts lists the agent's past boundaries by round.
func (s *Store) Pasts(agent string) ([]checkpoint.Past, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT data FROM cairn_past WHERE agent = $1 ORDER BY round`, agent)
	if err != nil {
		return nil, fmt.Errorf("pasts of agent %q: %w", agent, wrapConn(err))
	}
	datas, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("pasts of agent %q: %w", agent, wrapConn(err))
	}
	out := make([]checkpoint.Past, 0, len(datas))
	for _, d := range datas {
		p, err := checkpoint.DecodePast(agent, d)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// NewestPast reads the agent's past of the highest round, and no other.
func (s *Store) NewestPast(agent string) (checkpoint.Past, bool, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM cairn_past WHERE agent = $1 ORDER BY round DESC LIMIT 1`, agent).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return checkpoint.Past{}, false, nil
	}
	if err != nil {
		return checkpoint.Past{}, false, fmt.Errorf("newest past of agent %q: %w", agent, wrapConn(err))
	}
	p, err := checkpoint.DecodePast(agent, data)
	return p, err == nil, err
}
