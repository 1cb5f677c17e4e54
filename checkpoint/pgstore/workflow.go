package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

var _ checkpoint.Workflows = (*Store)(nil)

// upsertWorkflow replaces a workflow's row.
const upsertWorkflow = `INSERT INTO cairn_workflows (id, data) VALUES ($1, $2)
	ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated = now()`

// PutWorkflow upserts the workflow's row: one transaction, durable at its
// commit, sent again after a failure of the connection. While this Store
// holds the lease of the workflow's id (Lock, as a workflow's driver takes
// it), the upsert is fenced on it as an agent's writes are: a driver whose
// lease another process took over writes nothing, and gets a *FencedError
// (matching checkpoint.ErrLockLost) naming who holds the workflow now. A
// record written with no lease held (a test, a tool) is not fenced.
func (s *Store) PutWorkflow(w *checkpoint.Workflow) error {
	data, err := checkpoint.EncodeWorkflow(w)
	if err != nil {
		return err
	}
	s.mu.Lock()
	l := s.leases[w.ID]
	s.mu.Unlock()
	if l == nil {
		_, err = s.exec(idempotent, upsertWorkflow, w.ID, data)
	} else {
		b := s.fence(l, &pgx.Batch{})
		b.Queue(upsertWorkflow, w.ID, data)
		_, err = s.sendRule(l, b, idempotent)
	}
	var fe *FencedError
	if errors.As(err, &fe) {
		fe.Workflow = true
	}
	if err != nil {
		return fmt.Errorf("put workflow %s: %w", w.ID, err)
	}
	return nil
}

// Workflow reads and decodes the workflow's row, refusing one that is
// damaged or holds another workflow, with what to do about the row.
func (s *Store) Workflow(id string) (*checkpoint.Workflow, error) {
	if err := checkpoint.CheckID(id); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	ctx, cancel := s.opContext()
	defer cancel()
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM cairn_workflows WHERE id = $1`, id).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("workflow %s: %w", id, checkpoint.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read workflow %s: %w", id, wrapConn(err))
	}
	w, err := checkpoint.DecodeWorkflow(id+" in cairn_workflows", id, data)
	var ce *checkpoint.WorkflowCorruptError
	if errors.As(err, &ce) {
		del := fmt.Sprintf("DELETE FROM cairn_workflows WHERE id = '%s'", id)
		ce.Fix = fmt.Sprintf("restore the database from a backup, or delete the row to give workflow %s up (%s; its step agents stay in the database)", id, del)
		if ce.Holds != "" {
			ce.Fix = fmt.Sprintf("delete the row (%s): it is not the record of workflow %s, and %s is read from its own row, if it is there", del, id, ce.Holds)
		}
	}
	return w, err
}

// WorkflowIDs lists the workflows' ids, sorted.
func (s *Store) WorkflowIDs() ([]string, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id FROM cairn_workflows ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", wrapConn(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list workflows: %w", wrapConn(err))
	}
	return ids, nil
}
