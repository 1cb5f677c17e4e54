package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

var _ checkpoint.Pauser = (*Store)(nil)

// RequestPause sets the agent's pause column; it needs no lease, so it
// reaches whatever process on whatever machine runs the agent. Setting it
// twice is setting it once, so a failure of the connection sends it
// again. checkpoint.ErrNotFound when the agent has no state.
func (s *Store) RequestPause(agent string) error {
	if err := checkpoint.CheckID(agent); err != nil {
		return err
	}
	n, err := s.exec(idempotent, `UPDATE cairn_agents SET pause = true WHERE id = $1`, agent)
	if err != nil {
		return fmt.Errorf("request pause of agent %s: %w", agent, err)
	}
	if n == 0 {
		return fmt.Errorf("request pause of agent %s: %w", agent, checkpoint.ErrNotFound)
	}
	return nil
}

// PauseRequested reads the agent's pause column: one indexed row.
func (s *Store) PauseRequested(agent string) (bool, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return false, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	var p bool
	err := s.pool.QueryRow(ctx, `SELECT pause FROM cairn_agents WHERE id = $1`, agent).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for a pause request of agent %s: %w", agent, wrapConn(err))
	}
	return p, nil
}

// ClearPause resets the agent's pause column, again after a failure of
// the connection. A holder of the agent's lease clears it behind its
// fence, so that one taken over cannot drop a request meant for the
// process that runs the agent now: a *FencedError, with nothing changed.
func (s *Store) ClearPause(agent string) error {
	const clear = `UPDATE cairn_agents SET pause = false WHERE id = $1 AND pause`
	l, err := s.held(agent)
	if err == nil {
		b := s.fence(l, &pgx.Batch{})
		b.Queue(clear, agent)
		_, err = s.sendRule(l, b, idempotent)
	} else {
		_, err = s.exec(idempotent, clear, agent)
	}
	if err != nil {
		return fmt.Errorf("clear the pause request of agent %s: %w", agent, err)
	}
	return nil
}
