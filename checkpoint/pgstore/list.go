package pgstore

import (
	"fmt"
	"sync"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/jackc/pgx/v5"
)

// listed keeps each agent's summary with the version of the rows it was
// read from, for a process that lists the store again and again (cairn
// serve answers the web view's list, which it asks for every few
// seconds): an agent whose rows are as they were is not read again, where
// a read sends its whole snapshot from the database and decodes it.
//
// The version (listQuery) is the agent's row's xmin, which every update
// of it changes (a compaction's new snapshot and base, a commit's durable
// mark), with the count, the last sequence number and the newest xmin of
// its journal's rows after the snapshot, which every append, cut and
// rewrite changes. Whether a process runs the agent is read afresh every
// time, with the versions, in the same query.
type listed struct {
	mu   sync.Mutex
	byID map[string]versioned
}

type versioned struct {
	version string
	sum     checkpoint.Summary
}

// listQuery reads every agent's version and lease, by id: an agent with
// no lease row has one released (leaseRow.scan's columns, each with what
// no row means).
const listQuery = `SELECT a.id, a.xmin::text || '/' || j.n || '/' || coalesce(j.last, -1) || '/' || coalesce(j.newest, -1),
	coalesce(l.released, true), coalesce(l.expires > now(), false), coalesce(l.holder_host, ''),
	coalesce(l.holder_pid, 0), coalesce(l.holder_run, ''), coalesce(l.since, now()), coalesce(l.expires, now()),
	coalesce(l.epoch, 0), coalesce(l.holder_space, '')
FROM cairn_agents a
CROSS JOIN LATERAL (SELECT count(*) AS n, max(seq) AS last, max(xmin::text::bigint) AS newest
	FROM cairn_journal WHERE agent = a.id AND seq >= a.base) j
LEFT JOIN cairn_leases l ON l.agent = a.id
ORDER BY a.id`

// List summarises every agent of the store, by id. An agent whose rows
// did not change since this Store last listed it is not read again
// (listed); one that could not be read is read again every time.
func (s *Store) List() ([]checkpoint.Summary, error) {
	type agentRow struct {
		id, version string
		lease       leaseRow
	}
	ctx, cancel := s.opContext()
	defer cancel()
	var all []agentRow
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// A table never analysed is estimated at thousands of agents,
		// and the server would compile the query (JIT) for a tenth of a
		// second to run it for a few milliseconds.
		if _, err := tx.Exec(ctx, `SET LOCAL jit = off`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, listQuery)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r agentRow
			if err := r.lease.scan(prefixed{rows, []any{&r.id, &r.version}}); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", wrapConn(err))
	}
	out := make([]checkpoint.Summary, 0, len(all))
	seen := map[string]bool{}
	for _, r := range all {
		seen[r.id] = true
		if sum, ok := s.listed.get(r.id, r.version); ok {
			sum.Locked = r.lease.running()
			out = append(out, sum)
			continue
		}
		sum, err := s.Summary(r.id)
		if err != nil {
			continue // removed since the query
		}
		if sum.Err == nil {
			// What was read is as new as the version, or newer, and
			// then no longer the version the next list reads.
			s.listed.put(r.id, r.version, sum)
		}
		out = append(out, sum)
	}
	s.listed.keep(seen)
	return out, nil
}

// prefixed is a row whose first columns go to dest, and the rest to
// whoever scans it.
type prefixed struct {
	row  pgx.Row
	dest []any
}

func (p prefixed) Scan(dest ...any) error { return p.row.Scan(append(p.dest, dest...)...) }

func (l *listed) get(id, version string) (checkpoint.Summary, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.byID[id]
	return v.sum, ok && v.version == version
}

func (l *listed) put(id, version string, sum checkpoint.Summary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]versioned{}
	}
	sum.Locked = false // read afresh each time
	l.byID[id] = versioned{version, sum}
}

// keep forgets every agent but those listed.
func (l *listed) keep(ids map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.byID {
		if !ids[id] {
			delete(l.byID, id)
		}
	}
}
