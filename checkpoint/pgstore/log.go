package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

// pgLog appends to an agent's journal. Each Append is one transaction,
// fenced on the lease's epoch, committed without waiting for the server's
// disk (synchronous_commit off): the record reaches the server at once, as
// a file store's reaches the operating system, and survives the writer's
// death but not the server's crash. Sync and Commit are transactions
// committed with synchronous_commit on, which makes them and every
// transaction before them durable: one round trip and one WAL flush.
type pgLog struct {
	s      *Store
	l      *lease
	replay *checkpoint.Replay
	types  []int16  // records to write in the next transaction
	recs   [][]byte // their payloads
	sums   []int64  // and their checksums (recordSum)
	next   int64    // the sequence number of the next record
	base   int64    // the first sequence number after the snapshot
	// journal is the bytes after the snapshot, snap the snapshot's size,
	// round the bytes appended since the last Commit.
	journal, snap, round int64
	broken               error
}

func newLog(s *Store, l *lease, rec *checkpoint.Recovered, next, base int64) *pgLog {
	return &pgLog{s: s, l: l, replay: checkpoint.NewReplay(rec.State, rec.Tail), next: next, base: base,
		journal: rec.JournalBytes, snap: rec.SnapshotBytes}
}

// Append writes records and applies them to the log's state.
func (g *pgLog) Append(recs ...checkpoint.Record) error {
	if err := g.add(recs...); err != nil {
		return err
	}
	return g.write(false, false)
}

// add encodes records for the next write and applies them.
func (g *pgLog) add(recs ...checkpoint.Record) error {
	if g.broken != nil {
		return g.broken
	}
	for _, rec := range recs {
		b, err := checkpoint.EncodeRecord(rec)
		if err != nil {
			return fmt.Errorf("encode %s record: %w", rec.Type, err)
		}
		if err := g.replay.Add(rec); err != nil {
			return err
		}
		g.types, g.recs = append(g.types, int16(rec.Type)), append(g.recs, b)
		g.sums = append(g.sums, recordSum(int16(rec.Type), b))
		g.round += int64(len(b))
	}
	return nil
}

// Commit writes recs, which end with a Commit or Abort record, in a
// transaction that waits for the server's disk, making every record
// appended before them durable too. When the journal has grown past the
// snapshot, the same transaction replaces the snapshot with the new
// boundary and deletes the journal before it.
//
// # Errors
//
// A *FencedError when the lease was lost: nothing was written, and the
// log refuses every later write. ErrUnavailable when the database did not
// answer: the round may or may not have been committed, and the log
// refuses every later write; Open tells which.
func (g *pgLog) Commit(recs ...checkpoint.Record) (int64, error) {
	if len(recs) == 0 {
		return 0, errors.New("commit with no record")
	}
	rec := recs[len(recs)-1]
	if rec.Type != checkpoint.RecCommit && rec.Type != checkpoint.RecAbort {
		return 0, fmt.Errorf("commit with a %s record", rec.Type)
	}
	if err := g.add(recs...); err != nil {
		return 0, err
	}
	written := g.round
	if err := g.write(true, rec.Type == checkpoint.RecCommit); err != nil {
		return 0, err
	}
	g.round = 0
	return written, nil
}

// Sync makes every record appended so far durable.
func (g *pgLog) Sync() error {
	if g.broken != nil {
		return g.broken
	}
	return g.write(true, false)
}

// write writes the records added and the events written since in one
// fenced transaction, durable or not, compacting when allowed and due.
func (g *pgLog) write(durable, mayCompact bool) error {
	n := int64(len(g.recs))
	var size int64
	for _, r := range g.recs {
		size += int64(len(r))
	}
	agent := g.l.agent
	b := g.s.fence(g.l, &pgx.Batch{})
	if n > 0 {
		// The rows follow the last one this log wrote, which must still be
		// there: a crash of the server loses the appends it had not yet
		// written out, and rows written after them would leave a hole. The
		// first row's seq is read from its predecessor's (from the snapshot's
		// base when there is none to follow), so a predecessor gone makes
		// it NULL and the transaction fails whole (lostTail).
		b.Queue(`INSERT INTO cairn_journal (agent, seq, type, payload, crc)
			SELECT $1, (CASE WHEN $2::bigint = $6::bigint THEN $2
				ELSE (SELECT j.seq + 1 FROM cairn_journal j WHERE j.agent = $1 AND j.seq = $2 - 1) END) + x.o - 1,
				x.t, x.p, x.c
			FROM unnest($3::smallint[], $4::bytea[], $5::bigint[]) WITH ORDINALITY AS x(t, p, c, o)`,
			agent, g.next, g.types, g.recs, g.sums, g.base)
	}
	var snap []byte
	if st := g.replay.State(); mayCompact && g.journal+size > g.snap && len(g.replay.Tail()) == 0 {
		var err error
		if snap, err = checkpoint.EncodeState(st); err != nil {
			return fmt.Errorf("encode snapshot of agent %q: %w", agent, err)
		}
		b.Queue(`UPDATE cairn_agents SET snapshot = $2, base = $3, snapshot_crc = $4 WHERE id = $1`,
			agent, snap, g.next+n, sum(snap))
		b.Queue(`DELETE FROM cairn_journal WHERE agent = $1 AND seq < $2`, agent, g.next+n)
	}
	if durable {
		// What a Read must find (see lostRowsError): in the transaction
		// that makes the rows durable, so it never claims more than they.
		// It is read from the last row's seq (unless the snapshot is the
		// boundary there), so that rows a crash of the server lost are not
		// claimed: that row gone, it is NULL and the transaction fails
		// whole (lostTail).
		base := g.base
		if snap != nil {
			base = g.next + n
		}
		b.Queue(`UPDATE cairn_agents SET durable = CASE WHEN $2::bigint = $3::bigint THEN $2
			ELSE (SELECT j.seq + 1 FROM cairn_journal j WHERE j.agent = $1 AND j.seq = $2 - 1) END
			WHERE id = $1`, agent, g.next+n, base)
	}
	events := g.s.takeEvents(agent)
	if len(events) > 0 {
		b.Queue(`INSERT INTO cairn_events (agent, data, crc) VALUES ($1, $2, $3)`, agent, events, sum(events))
	}
	if _, err := g.s.sendGrouped(g.l, b, durable); err != nil {
		if lostTail(err) {
			err = &lostTailError{Agent: agent, Seq: g.next - 1}
		}
		g.broken = fmt.Errorf("write journal of agent %q: %w", agent, err)
		return g.broken
	}
	g.next += n
	g.journal += size
	if snap != nil {
		g.journal, g.snap, g.base = 0, int64(len(snap)), g.next
	}
	g.types, g.recs, g.sums = g.types[:0], g.recs[:0], g.sums[:0]
	return nil
}

// State is the boundary state the log has reached.
func (g *pgLog) State() *checkpoint.State { return g.replay.State() }

// Close closes the log; everything appended has been written.
func (g *pgLog) Close() error { return nil }
