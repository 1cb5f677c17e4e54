package pgstore

import (
	"context"
	"hash/crc32"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
)

var _ checkpoint.Checker = (*Store)(nil)

// snapshotPiece is how much of a snapshot Check holds at once.
const snapshotPiece = 4 << 20

// Check says whether Read would read agent, without decoding its state.
// In one snapshot of the database, as Read reads, it reads the agent's
// snapshot in pieces of 4 MiB, checking them against its checksum and
// taking its round from its first bytes (checkpoint.StateRound), then its
// journal's rows one at a time: their sequence numbers without a gap,
// each row's checksum, the commits each the round after the one before
// (checkpoint.JournalCheck), and as many rows as were durable. Anything
// else (damage, a row written before checksums, rows lost) is left to
// Read: Check then reads the agent and returns Read's error, word for
// word, or nil where Read reads it. So Check's memory does not grow with
// the state, and a refusal costs a Read.
//
// What Check does not decode, it does not judge: a row whose checksum
// holds over a payload that does not decode, or a compaction that does
// not fit the conversation, passes Check and fails Read. Only a defective
// writer makes such a row; damage to the bytes fails the checksum.
func (s *Store) Check(agent string) error {
	if s.clean(agent) {
		return nil
	}
	_, err := s.Read(agent)
	return err
}

// clean reports whether agent reads as Check describes.
func (s *Store) clean(agent string) bool {
	ctx, cancel := s.opContext()
	defer cancel()
	clean := false
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			var err error
			clean, err = cleanTx(ctx, tx, agent)
			return err
		})
	return err == nil && clean
}

func cleanTx(ctx context.Context, tx pgx.Tx, agent string) (bool, error) {
	var size, base, durable int64
	var snapSum, first *int64
	if err := tx.QueryRow(ctx, `SELECT length(snapshot), base, durable, snapshot_crc, `+firstSeq+` FROM cairn_agents WHERE id = $1`, agent).
		Scan(&size, &base, &durable, &snapSum, &first); err != nil {
		return false, err
	}
	if snapSum == nil || size == 0 || baseDamage(agent, base, durable, first) != nil {
		return false, nil // a row written before checksums: only decoding it judges it
	}
	round, ok, err := cleanSnapshot(ctx, tx, agent, size, *snapSum)
	if err != nil || !ok {
		return false, err
	}
	rows, err := tx.Query(ctx, `SELECT seq, type, payload, crc FROM cairn_journal WHERE agent = $1 AND seq >= $2 ORDER BY seq`, agent, base)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	c := checkpoint.NewJournalCheck(round)
	next := base
	for rows.Next() {
		var seq int64
		var typ int16
		var payload []byte
		var crc *int64
		if err := rows.Scan(&seq, &typ, &payload, &crc); err != nil {
			return false, err
		}
		if seq != next || crc == nil || *crc != recordSum(typ, payload) || !c.Next(checkpoint.RecordType(typ), payload) {
			return false, nil
		}
		next = seq + 1
	}
	return next >= durable, rows.Err()
}

// cleanSnapshot reads agent's snapshot of size bytes in pieces and
// reports whether its checksum is want, and its round.
func cleanSnapshot(ctx context.Context, tx pgx.Tx, agent string, size, want int64) (round int, ok bool, err error) {
	var crc uint32
	for off := int64(0); off < size; off += snapshotPiece {
		var piece []byte
		if err := tx.QueryRow(ctx, `SELECT substring(snapshot from $2 for $3) FROM cairn_agents WHERE id = $1`,
			agent, off+1, snapshotPiece).Scan(&piece); err != nil {
			return 0, false, err
		}
		if off == 0 {
			if round, ok = checkpoint.StateRound(piece); !ok {
				return 0, false, nil
			}
		}
		crc = crc32.Update(crc, castagnoli, piece)
	}
	return round, int64(crc) == want, nil
}
