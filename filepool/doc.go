// Package filepool keeps track of the workspace files an agent has seen.
// Every path a tool read, wrote or deleted is an Entry: its content hash
// (sha256), its size, whether it existed, and the round and call that last
// saw it. From that record the pool answers three questions: does a file
// still hold what the agent last saw (Stale, CheckBase: a write based on a
// stale read is a conflict), what changed outside the agent while it ran
// (Watch, Watcher.Drain), and what changed while it was down (Reconcile).
// The record is a State, a plain value that the host keeps in the loop
// checkpoint and hands back to New on resume.
//
// # Paths
//
// Paths are workspace-relative, slash-separated and clean ("notes/a.md").
// CleanPath turns what a tool named into that form and refuses absolute
// paths and paths that climb out of the workspace. Files are read through
// an os.Root opened on the workspace, so a symlink that leads outside is
// never followed: such a path, like a directory, FIFO or unreadable file
// where a file used to be, is reported as a Change of kind Unreadable.
//
// # Guarantees
//
// Reconcile is authoritative: it re-hashes every tracked file and reports
// every difference from the record, whatever happened in between. Watching
// is best effort: file-system notifications can be lost (queue overflow,
// directories replaced, network file systems), and a change that is undone
// before the next Drain is not reported. Drain re-hashes the paths that had
// events, so what it reports is a real difference from the record, and the
// agent's own writes, recorded with Record before the next Drain, are never
// reported as outside changes. A stopped Watcher's Drain falls back to a
// full re-hash.
//
// The pool does not lock files: another process can change a file between
// CheckBase and the write that follows it. It narrows the window in which a
// stale write goes unnoticed; it does not close it.
//
// # Use in a round
//
// The host drives the pool; the pool never reads a file on its own, except
// when asked to re-hash.
//
//   - On start or resume: New with the checkpointed State. Record the
//     effects of every call of the interrupted round that were applied, or
//     that resume applies now: the checkpoint predates them. Then Watch,
//     then Reconcile, tell the model with Summary, and Accept. (Watching
//     first means a change made during Reconcile is not missed.)
//   - At the start of each round: Drain, and tell the model with Summary.
//   - For each file a call read: Record with the Version of what it read
//     (or Saw, which hashes the file as it is now).
//   - Before applying a call's effect: CheckBase with the effect's base;
//     a *ConflictError is the call's result.
//   - After applying it: Record with OpWrite or OpDelete and the new
//     Version, before the next Drain. Do not Drain while applying: a file
//     changed but not yet recorded would be reported as an outside change.
//   - At the round's commit: State goes into the checkpoint.
//
// # Bounds
//
// A pool tracks at most Config.MaxEntries paths; past that it forgets the
// entries seen in the oldest rounds. Hashing streams the file, so a large
// file costs time, not memory.
//
// A Pool and its Watchers are safe for concurrent use.
package filepool
