// Package checkpoint keeps an agent's loop state crash-safe: an append-only
// journal of what happened in each round, snapshots of the whole state at
// round boundaries, and a per-agent lock so that only one process ever runs
// an agent. It imports nothing of cairn's but the standard library and its
// codec.
//
// # Rounds are transactions
//
// The host journals a round as it happens: the user's prompt, the model's
// turn, each call's phases and result. None of it is part of the state until
// the round's Commit record: replay applies a round's records only when it
// reaches that record, and drops them at an Abort record. What follows the
// last Commit is the interrupted round (Recovered.Tail), which resume
// inspects to say which calls were in flight. RunStarted and RunEnded stand
// outside rounds and apply at once.
//
// # Files
//
// A store directory holds:
//
//	agents/<id>/lock                     the flock file; never deleted; its content names the holder
//	agents/<id>/snap-<round>.cbor        the state at a boundary (round as 16 hex digits)
//	agents/<id>/journal-<round>.log      the records after that boundary
//	blobs/sha256/<hex>                   content-addressed agent files, scripts and modules
//
// The newest snapshot and the journal of the same round are the agent.
// Snapshots are written to a temp file beside the target, fsynced, renamed
// and the directory fsynced; readers ignore "*.tmp". When a journal grows
// larger than its snapshot, the next Commit writes a new snapshot and starts
// a new journal; the previous pair is kept, older ones are removed.
//
// # Frames
//
// Journals and snapshots are sequences of frames:
//
//	offset 0  uint32 little-endian  payload length n (1 to MaxRecordSize)
//	offset 4  uint8                 record type
//	offset 5  uint32 little-endian  CRC-32C (Castagnoli) of bytes 0..4 and the payload
//	offset 9  n bytes               the payload, one CBOR data item
//
// A journal starts with a Header frame naming the schema version, the agent
// and the round it follows. A snapshot is a Header frame and one State frame.
//
// # Damage
//
// A frame that is cut short, fails its CRC or is all zeros is a torn tail
// when no valid frame follows it: it is what a crash leaves mid-append (or
// preallocation leaves unwritten), and it is dropped; opening for write
// truncates it away. A damaged frame with a valid frame after it is
// corruption: reading fails with a *CorruptError naming the file and the
// offset, and nothing is dropped or repaired. A header or state from a newer
// schema fails with a *FutureSchemaError before anything is written.
//
// CBOR is encoded deterministically (RFC 8949 core deterministic encoding)
// with times as RFC 3339 text with nanoseconds. Decoding rejects duplicate
// map keys and indefinite lengths, bounds nesting and sizes, and ignores
// unknown keys, so a newer minor field does not break an older reader of
// the same schema.
package checkpoint
