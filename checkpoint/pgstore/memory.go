package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

var _ checkpoint.Memory = (*Store)(nil)

// Remember upserts the fact's row, again after a failure of the
// connection.
func (s *Store) Remember(ns string, f checkpoint.Fact) error {
	if err := checkpoint.CheckMemoryNamespace(ns); err != nil {
		return err
	}
	data, err := checkpoint.EncodeFact(f)
	if err != nil {
		return err
	}
	if _, err := s.exec(idempotent, `INSERT INTO cairn_memory (namespace, key, data, crc) VALUES ($1, $2, $3, $4)
		ON CONFLICT (namespace, key) DO UPDATE SET data = excluded.data, crc = excluded.crc`, ns, f.Key, data, sum(data)); err != nil {
		return fmt.Errorf("remember %s in %s: %w", f.Key, ns, err)
	}
	return nil
}

// Recall reads the namespace's rows, sorted by key.
func (s *Store) Recall(ns string) ([]checkpoint.Fact, error) {
	if err := checkpoint.CheckMemoryNamespace(ns); err != nil {
		return nil, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT key, data, crc FROM cairn_memory WHERE namespace = $1 ORDER BY key COLLATE "C"`, ns)
	if err != nil {
		return nil, fmt.Errorf("recall %s: %w", ns, wrapConn(err))
	}
	var out []checkpoint.Fact
	var key string
	var data []byte
	var crc *int64
	_, err = pgx.ForEachRow(rows, []any{&key, &data, &crc}, func() error {
		if sumMismatch(crc, sum(data)) {
			return &MemoryRowError{Namespace: ns, Key: key,
				err: &checkpoint.CorruptError{File: "fact " + key + " of " + ns, Reason: badSum}}
		}
		f, err := checkpoint.DecodeFact("fact "+key+" of "+ns, data)
		var ce *checkpoint.CorruptError
		if errors.As(err, &ce) {
			return &MemoryRowError{Namespace: ns, Key: key, err: ce}
		}
		out = append(out, f)
		return err
	})
	var me *MemoryRowError
	if errors.As(err, &me) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("recall %s: %w", ns, wrapConn(err))
	}
	return out, nil
}

// Forget deletes the fact's row: checkpoint.ErrNotFound if there is none.
// It is sent again only if certainly not run: a second try after a
// first that deleted the row would report it missing.
func (s *Store) Forget(ns, key string) error {
	n, err := s.exec(notRun, `DELETE FROM cairn_memory WHERE namespace = $1 AND key = $2`, ns, key)
	if err != nil {
		return fmt.Errorf("forget %s in %s: %w", key, ns, err)
	}
	if n == 0 {
		return fmt.Errorf("forget %s in %s: %w", key, ns, checkpoint.ErrNotFound)
	}
	return nil
}

// Namespaces lists the namespaces that hold a fact.
func (s *Store) Namespaces() ([]string, error) {
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT namespace FROM cairn_memory GROUP BY namespace ORDER BY namespace COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list memory: %w", wrapConn(err))
	}
	ns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list memory: %w", wrapConn(err))
	}
	return ns, nil
}
