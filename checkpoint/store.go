package checkpoint

import (
	"io"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Store keeps agents. FileStore keeps them in a directory; MemStore in
// memory, for tests and embedders that need no durability. A store shared
// between machines would implement the same interface with its own lock.
type Store interface {
	// Lock takes an agent's lock without waiting. ErrLocked (a
	// *LockedError naming the holder) when another process has it.
	Lock(agent string, h Holder) (Lock, error)
	// Exists reports whether the agent has any state.
	Exists(agent string) bool
	// Create starts a new agent at st. ErrExists if it has state.
	Create(agent string, st *State) (Log, error)
	// Open recovers an agent for writing. ErrNotFound if it has no state.
	Open(agent string) (*Recovered, Log, error)
	// Read recovers an agent without the lock, changing nothing.
	Read(agent string) (*Recovered, error)
	// Remove deletes an agent's state; the caller holds its lock.
	Remove(agent string) error
	// List summarises every agent; Summary one of them (ErrNotFound if
	// it has no state).
	List() ([]Summary, error)
	Summary(agent string) (Summary, error)
	// Events appends to an agent's event history (the caller holds its
	// lock); ReadEvents reads it from the start, ErrNotFound if there is
	// none. The history is not part of the loop state and is not synced.
	Events(agent string) (io.WriteCloser, error)
	ReadEvents(agent string) (io.ReadCloser, error)
	// DropEvents removes an agent's event history, if it has one (the
	// caller holds its lock): Remove keeps it, and an import makes an
	// agent's history the archive's, not the archive's after what a
	// failed import, or an agent of that id before, left.
	DropEvents(agent string) error
	// PutBookmark keeps a named copy of a boundary, replacing one of the
	// same label; Bookmarks lists them, oldest first.
	PutBookmark(agent string, b Bookmark) error
	Bookmarks(agent string) ([]Bookmark, error)
	// PutBlob stores content by digest; Blob returns it. ErrNotFound
	// for an unknown digest.
	PutBlob(data []byte) (digest string, err error)
	Blob(digest string) ([]byte, error)
}

// Log appends to an agent's journal. It is not safe for concurrent use.
type Log interface {
	// Append writes records; they reach the operating system at once but
	// are not made durable.
	Append(recs ...Record) error
	// Commit appends recs, the last of them a Commit or Abort record, in
	// one write, and makes everything appended so far durable (one
	// fdatasync). It may compact the journal into a snapshot. It returns
	// the bytes the round added to the journal.
	Commit(recs ...Record) (int64, error)
	// Sync makes everything appended so far durable.
	Sync() error
	// State is the state at the last boundary, as this log has applied it.
	State() *State
	Close() error
}

// Recovered is an agent as it was found.
type Recovered struct {
	// State is the state at the last boundary.
	State *State
	// Tail holds the round-scoped records after the boundary: the round
	// that was interrupted, or nil.
	Tail []Record
	// JournalBytes and SnapshotBytes are the sizes of the current journal
	// and snapshot.
	JournalBytes, SnapshotBytes int64
	// dropped says that the journal's torn tail past JournalBytes held
	// valid frames, which opening for write must not let come back.
	dropped bool
}

// Interrupted reports whether the agent stopped mid-run: a round left
// uncommitted, or a run that never ended.
func (r *Recovered) Interrupted() bool {
	return len(r.Tail) > 0 || r.State.Status == StatusRunning
}

// Summary is one agent as `cairn ls` shows it.
type Summary struct {
	ID     string
	Status Status
	Locked bool // a process runs it now
	// Interrupted says that the agent's last run stopped without
	// recording its end, its process killed or its machine lost: Status
	// still says running, and resume settles what it left. A run that
	// ended with its round still open (a call awaiting approval, a
	// delegation whose sub-agent paused, a model unavailable, a stop by
	// a signal) ended with its own Status, which stands; resume continues
	// that round all the same (Recovered.Interrupted reports it).
	Interrupted bool
	// Decided says, of an agent awaiting approval, that every call that
	// awaited a decision has one now (cairn approve or deny ran): nothing
	// waits for a person, and a resume carries the decisions out.
	Decided   bool
	Round     int
	Usage     conversation.Usage
	ToolCalls int
	Updated   time.Time
	Err       error // the agent could not be read
	// Parent is, for a sub-agent, the agent whose call made it. A fork
	// of a sub-agent has none: its state keeps the sub-agent's parent,
	// whose agent file still bounds it, but no call of that agent made
	// it, and it is listed, exported and removed as an agent of its own
	// (its Lineage says where it came from).
	Parent string
	// Labels and Lineage are the agent's, as its state has them.
	Labels  Labels
	Lineage *Lineage
}

// allDecided reports whether an open round had calls awaiting a
// decision and none is still waiting: each call's newest phase is past
// approval_required.
func allDecided(tail []Record) bool {
	last := map[string]Phase{}
	for _, t := range tail {
		if t.Type == RecPhase {
			last[t.Call] = t.Phase
		}
	}
	asked := false
	for _, p := range last {
		switch p {
		case PhaseApprovalRequired:
			return false
		case PhaseApproved, PhaseDenied:
			asked = true
		}
	}
	return asked
}

func (s *Summary) fill(r *Recovered) {
	s.Status, s.Round, s.Usage, s.ToolCalls, s.Updated =
		r.State.Status, r.State.Round, r.State.Usage, r.State.ToolCalls, r.State.UpdatedAt
	// An open round whose end no run recorded: a run that never ended,
	// or records no run accounts for.
	s.Interrupted = r.State.Status == StatusRunning || len(r.Tail) > 0 && r.State.Status == StatusIdle
	s.Decided = r.State.Status == StatusApproval && allDecided(r.Tail)
	if p := r.State.Parent; p != nil && r.State.Lineage == nil {
		s.Parent = p.Agent
	}
	s.Labels, s.Lineage = r.State.Labels, r.State.Lineage
}
