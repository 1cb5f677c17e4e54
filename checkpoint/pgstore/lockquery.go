package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

var (
	_ checkpoint.LockQuery   = (*Store)(nil)
	_ checkpoint.HolderQuery = (*Store)(nil)
)

// Locked reads the agent's lease row, one indexed row, and judges it by
// the rule Summary's Locked uses (leaseRow.running): false when the agent
// has no lease.
func (s *Store) Locked(agent string) (bool, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return false, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	var r leaseRow
	err := r.scan(s.pool.QueryRow(ctx, `SELECT `+leaseCols+` FROM cairn_leases WHERE agent = $1`, agent))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the lease of agent %s: %w", agent, wrapConn(err))
	}
	return r.running(), nil
}

// Holder reads the agent's lease: its holder when a process runs the
// agent by the rule Locked uses.
func (s *Store) Holder(agent string) (checkpoint.Holder, bool, error) {
	l, running, err := s.Running(agent)
	if err != nil || !running {
		return checkpoint.Holder{}, false, err
	}
	return l.Holder, true, nil
}
