package pgstore

import (
	"bytes"
	"fmt"
	"io"

	"github.com/cairnrun/cairn/checkpoint"
)

var _ checkpoint.EventsFrom = (*Store)(nil)

// ReadEventsFrom reads the agent's event history from its offset-th byte:
// the rows that end past it, the first cut where offset falls in it. A
// follower asks this every poll, so it sends only what is new, not the
// whole history again. The offset is of the history as it is now: a trim
// (checkpoint.Retention.Rounds) moves every line it keeps, so a follower
// checks that what it read last is still before the offset it asks from.
func (s *Store) ReadEventsFrom(agent string, offset int64) (io.ReadCloser, error) {
	if err := checkpoint.CheckID(agent); err != nil {
		return nil, err
	}
	ctx, cancel := s.opContext()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT seq, data, crc, upto FROM (
		SELECT seq, data, crc, sum(octet_length(data)) OVER (ORDER BY seq) AS upto
		FROM cairn_events WHERE agent = $1) t
		WHERE upto > $2 ORDER BY seq`, agent, offset)
	if err != nil {
		return nil, fmt.Errorf("read event history of agent %q: %w", agent, wrapConn(err))
	}
	defer rows.Close()
	var out []byte
	for rows.Next() {
		var r eventRow
		var upto int64
		if err := rows.Scan(&r.Seq, &r.Data, &r.Sum, &upto); err != nil {
			return nil, fmt.Errorf("read event history of agent %q: %w", agent, wrapConn(err))
		}
		if err := r.check(agent); err != nil {
			return nil, err
		}
		data := r.Data
		if start := upto - int64(len(data)); start < offset {
			data = data[offset-start:]
		}
		out = append(out, data...)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read event history of agent %q: %w", agent, wrapConn(err))
	}
	if len(out) == 0 && offset == 0 {
		return nil, fmt.Errorf("event history of agent %q: %w", agent, checkpoint.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}
