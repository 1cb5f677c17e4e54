// Package pgstore keeps cairn's agents in a PostgreSQL database, so that
// an agent stopped on one machine can be resumed on any other that reaches
// the database. It implements checkpoint.Store: journal records and
// snapshots in the file store's CBOR, content-addressed blobs shared by
// every agent, event histories and bookmarks.
//
// # Leases and fencing
//
// In place of the file store's flock, an agent is guarded by a lease: a
// row naming its holder (host, pid, run, since), an expiry the holder
// renews while it runs, and an epoch that rises every time the lease is
// taken. Every write of the agent's state is one transaction whose first
// statement checks that the writer's epoch is still the lease's; if
// another process took the agent since (after the lease expired, or by
// Steal), the transaction fails whole and the writer gets a *FencedError.
// A holder that was paused or cut off past its lease therefore never
// commits after another took over. Expiry is judged by the database's
// clock, so the nodes' clocks need not agree.
//
// # Writes
//
// Each Append is one transaction committed with synchronous_commit off:
// the records reach the server at once, as a file store's reach the
// kernel, and survive the writer's death. Sync and Commit are
// transactions committed with synchronous_commit on, whose WAL flush
// makes them and everything before them durable. Every write is sent as
// one batch, which the server runs as one implicit transaction, in one
// round trip: the fence, the records, a compaction when due, and the
// event lines written since. A write that was certainly not run (the
// server could not be reached, or a restart had closed its connection) is
// sent again, pausing longer each time, until the store's timeout; one
// that may have been run fails with ErrUnavailable, and the log refuses
// every later write, since only a fresh Open can say what was committed.
//
// # Schema
//
// The tables are created and migrated by Open from SQL files embedded in
// the binary (migrations/), in one transaction under an advisory lock. A
// database whose schema is newer than the binary is refused with a
// *checkpoint.FutureSchemaError before anything is written. So is every
// later write of a Store that opened the database before another node
// migrated it: the fence that starts each write checks the version too,
// and the transaction fails whole. So is its next take of a lease, which
// reads the version with the lease row and takes nothing, and each of its
// writes that no lease fences (a blob, a bookmark, a memory fact, gc's
// removals…), which a check of the version starts (schemaCheckSQL).
//
// # Blobs
//
// A blob of up to 4 MiB is one value of its row in cairn_blobs; a larger
// one is kept in 4 MiB rows of cairn_blob_chunks, each written in a
// transaction of its own, so that a write cut off goes on from the chunks
// it stored, checked by their SHA-256, once its row is made and until the
// row is made whole, and read in one snapshot (blob.go), since PostgreSQL
// keeps no value of 1 GB or more.
//
// # Checksums
//
// Every journal row, snapshot, past and event row is written with a
// CRC-32C of its bytes and checked against it when read (crc.go): a byte
// flipped where the CBOR still decodes is a *CorruptRowError naming the
// row. Rows from before schema version 7 have none and are not checked.
// Bookmarks and memory facts carry one since version 10 (a bookmark's
// damage is a *CorruptRowError, a fact's a *MemoryRowError).
//
// A Store is safe for concurrent use.
package pgstore
