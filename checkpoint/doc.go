// Package checkpoint keeps an agent's loop state crash-safe: an append-only
// journal of what happened in each round, snapshots of the whole state at
// round boundaries, and a per-agent lock so that only one process ever runs
// an agent. It imports nothing of cairn's but the standard library and its
// codec.
//
// # What a user needs
//
// A program that embeds cairn opens a Store (OpenFileStore, NewMemStore,
// or package checkpoint/pgstore), hands it to package host, and reads
// what it holds: State and the types in it, Summary, Bookmark, Timeline
// and Past, Workflow and Fact, with the errors ErrNotFound, ErrExists,
// ErrLocked, ErrLockLost, ErrLost, ErrCorrupt, ErrFutureSchema, ErrNoPast
// and ErrNoMemory to branch on; Export, Import and ReadArchive move agents
// between stores. The conversation's types are in checkpoint/conversation.
//
// A Store written outside this package (checkpoint/pgstore is one, and
// checkpoint/storetest checks one) also needs what keeps it
// interchangeable with the file store: Record and its types, the codecs
// (EncodeRecord, EncodeState and the other Encode and Decode functions),
// Replay, NewSummary, BlobDigest, MarkState and MarkPasts.
//
// # Rounds are transactions
//
// The host journals a round as it happens: the user's prompt (or a note
// of files changed outside the agent, with the file pool entries of the
// files it told of), the model's turn, each call's
// phases and result with its effect manifest, each call's "applied", and
// the file pool entries the round changed. None of it is part of the state until
// the round's Commit record: replay applies a round's records only when it
// reaches that record, and drops them at an Abort record (whose Usage, the
// dropped turn's tokens, still counts). A call may have two results: one
// marked Unsettled, journaled as it finished, and a later one that replaces
// it; the newest counts. A call in flight that its run ended (max_time)
// has a second executing phase, whose Stopped says what ended it. What follows the
// last Commit is the interrupted round (Recovered.Tail), which resume
// inspects to say which calls were in flight. RunStarted and RunEnded stand
// outside rounds and apply at once.
//
// # Files
//
// A store directory holds:
//
//	agents/<id>/lock                     the flock file; never deleted; its content names the holder
//	agents/<id>/committed                the commit mark: the least the files below must hold
//	agents/<id>/snap-<round>.cbor        the state at a boundary (round as 16 hex digits)
//	agents/<id>/journal-<round>.log      the records after that boundary
//	agents/<id>/events.jsonl             the event history, one JSON line per event (not synced); after
//	                                     gc --keep-rounds it starts with a warning of no run (TrimmedEvents)
//	agents/<id>/pause                    a pause request (empty; see Pauser), cleared by the run that obeys it
//	agents/<id>/bookmarks/<label>.cbor   a bookmark: a boundary's state and its workspace's blob
//	agents/<id>/past                     the agent's pasts (see Timeline): one frame of type 50 per
//	                                     committed round, its payload a CBOR Past; appended, never synced;
//	                                     gc --keep-rounds replaces it, its first past Trimmed (rounds_trim.go)
//	agents/<id>/past-index               where the past of every 32nd round starts in past: entries of 24
//	                                     bytes (offset, round, the frame's checksum, CRC-32C), so that only
//	                                     the newest pasts are decoded; appended, never synced
//	agents/<id>/staging/round-<N>/<call> what a call staged (the host's; see package host)
//	agents/<id>/changes/round-<N>/<call>.cbor  the changes of the last rounds, for diff and undo (the host's)
//	blobs/sha256/<hex>                   content-addressed agent files, scripts, modules, workspace archives,
//	                                     workspace manifests and the files of the workspaces pasts name
//	group/<16 hex>.log                   a group log (see Group commit); "*.tmp" while it is made
//	workflows/<id>.cbor                  a workflow's journal of completed steps (see Workflows), replaced atomically
//	memory/<namespace>/<hex key>.cbor    one fact of a memory namespace (see Memory), replaced atomically
//	fills/<random>.fill                  a fill under way outside the store (see FillMarks): JSON naming the
//	                                     directory filled, those made for it and the agent it is for,
//	                                     flocked by its process; "*.tmp" while it is made
//	namespaces/<name>/…                  namespace <name>: a store of its own, laid out as above
//
// The newest snapshot and the journal of the same round are the agent.
//
// # One writer
//
// The lock is a flock on the agent's directory and one on its lock file,
// each taken without waiting; the taker then checks that both paths still
// name what it locked (the same device and inode) and tries again if not.
// The directory's flock keeps a second process out even when the lock
// file is deleted or replaced under a holder; the holder checks at each
// Sync and Commit (one stat) that the lock file's path still names what it
// holds, and otherwise makes nothing more durable, commits nothing, and
// fails with an error matching ErrLockLost. Each holding of the lock has an epoch, written into the
// lock file with the holder, and every Commit record carries the epoch of
// its writer: a journal in which a round is committed under an epoch that
// an earlier round had already given way to is corruption (two writers),
// refused like any other.
//
// # Commit marks
//
// After each durable point (a Commit or a Sync, and a new journal; a new
// agent's first journal has its first mark at its first Sync or Commit,
// once the background syncs of first_syncs.go have ended) the
// journal rewrites the agent's commit mark in place, unsynced: one frame
// in the layout below, of type 0x50, whose payload is uvarints: version
// (1), the round of the snapshot the journal follows, the boundary round,
// and the journal's length. Since it is written only once what it
// describes is durable, a crash leaves a mark that claims no more than
// the files hold; one that cannot be read claims nothing. Recovery reads
// the mark before the files, and refuses with an error matching ErrLost an agent whose
// newest journal is shorter than its mark, whose boundary is older than
// its mark's, or whose newest snapshot is missing (the mark names a newer
// one, or a journal follows a snapshot that is gone, or the agent has a
// mark and no snapshot at all). A torn tail past the
// mark is what an append that never finished leaves, and is dropped as
// before; damage before the mark is corruption (see Damage).
// Snapshots are written to a temp file beside the target, fsynced, renamed
// and the directory fsynced; readers ignore "*.tmp". When a journal grows
// larger than its snapshot and reaches DefaultCompactAfter (64 KiB; see
// WithCompactAfter), the next Commit writes a new snapshot and starts a
// new journal; the previous pair is kept, older ones are removed. A
// reader without the lock that a compaction overtakes (its journal gone
// between its snapshot and its replay) reads again: the writer updates the
// commit mark before it removes anything a reader of the earlier mark
// relies on.
//
// # Frames
//
// Journals and snapshots are sequences of frames:
//
//	offset 0  uint32 little-endian  payload length n (1 to 64 MiB)
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
// truncates it away.
//
// In a journal, a damaged frame with valid frames after it is a torn tail
// too when it lies past everything known to be durable. Appends that no
// sync has reached yet (a round whose calls change nothing is journaled
// unsynced until its commit) are written back by the kernel a page at a
// time, in any order, so a power cut may keep a later page of them and
// lose an earlier one. Known to be durable are the header, the first bytes
// the commit mark names, and everything before a Commit or Abort with a
// valid frame after it, since a round's commit is synced before anything
// of the next round is written. Such a tail is dropped from the damage on,
// valid frames and all, and opening for write truncates it and syncs the
// cut before it appends.
//
// The past file is never synced, so nothing in it is known to be durable:
// any damage in it is a torn tail, dropped with every frame after it, and
// the next PutPast truncates it before it appends. A past lost so costs
// the travel and time travel to its round, never the agent: its newest
// past is then older than its state, and the next run keeps the whole
// workspace at its boundary. An index entry is believed only when it
// names one of the frames before the damage, as it recorded it.
//
// Damage in what is known to be durable, and in snapshots and the other
// files damage with a valid frame after it, is corruption: reading fails
// with a *CorruptError naming the file and the offset, and nothing is
// dropped or repaired. A header or state from a newer schema fails with a
// *FutureSchemaError before anything is written.
//
// # Group commit
//
// A FileStore opened with WithGroupCommit lets the agents of one process
// share their fdatasyncs. Each agent still appends to its own journal, in
// the format above, but does not sync it: every append also goes, as an
// entry, to the store's group log, and one goroutine at a time writes what
// all agents have queued there and syncs it with one fdatasync; every
// Commit waiting at that moment returns together. The journals are synced
// when the group log grows past its limit (a few MiB) or the store is
// closed; then a new group log replaces it and it is removed. Measured
// with 64 agents on 2 cores and ext4, that is 2 to 3 times the rounds per
// second of one fdatasync per agent and round (BENCHMARKS.md). Batching
// the agents' own fdatasyncs instead does not help: concurrent fdatasyncs
// of different files already share ext4's journal commit, and issuing
// them from a pool of syncers was slower than from the agents.
//
// A group log is a header frame and entry frames, in the frame layout
// above, with binary payloads:
//
//	header (type 0x40)  "cairn-group-log", uvarint version (1), uvarint creation time (Unix ns)
//	entry  (type 0x41)  uvarint n, the agent id (n bytes), uvarint base round,
//	                    uint32 LE CRC-32C of the snapshot of that round,
//	                    uvarint offset, uint32 LE CRC-32C of the journal's bytes before offset,
//	                    the appended bytes (whole journal frames)
//
// An entry says: these bytes were appended at this offset of the journal
// that follows this snapshot, after exactly these bytes. Every reader of a
// store, with group commit or without, redoes the entries of every group
// log over an agent's journal before it reads it, in order of offset (of
// logs by creation time, then in file order), each only where both
// checksums match, so an entry whose predecessor was lost, or that belongs
// to an agent since removed and created again, is not redone. Open writes
// what it redid into the journal and syncs it before anything else. A
// group log's torn tail is dropped, even with valid entries after the
// damage: a power cut during a batch's fdatasync may keep a later page of
// the batch and lose an earlier one, and none of its commits had
// returned. Damage in the header, or before an entry that its agent's
// commit mark covers (the mark is written only once the entry is synced,
// and every byte of the log before it), is a *CorruptError naming the
// log, and a log of a newer version is a *FutureSchemaError, for every
// agent of the store, with nothing changed.
//
// Each group log belongs to one open store, which holds a flock on it
// from before its name appears. A store opened with WithGroupCommit adopts
// the logs no one holds (their store was not closed): under the lock of
// each agent they name it redoes them into the journals, syncs them, and
// removes the log. A log stays while one of its agents is locked by
// another process or cannot be read; readers go on redoing from it.
//
// CBOR is encoded deterministically (RFC 8949 core deterministic encoding)
// with times as RFC 3339 text with nanoseconds. Decoding rejects duplicate
// map keys and indefinite lengths, bounds nesting and sizes, and ignores
// unknown keys, so a newer minor field does not break an older reader of
// the same schema.
package checkpoint
