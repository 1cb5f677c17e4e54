package host

import (
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// EventType names an Event. The names are stable: they are the "type" field
// of `cairn run --json` and of `cairn events`.
type EventType string

// The kinds of Event.
const (
	EventRunStart         EventType = "run_start"         // Agent, Run, ResumedFrom
	EventModelText        EventType = "model_text"        // Text: a delta of the assistant's text
	EventModelTurn        EventType = "model_turn"        // Round, Calls: how many calls it asked for, Usage of the turn
	EventToolStart        EventType = "tool_start"        // Call
	EventToolEnd          EventType = "tool_end"          // Call with Outcome, DurationMS and Output
	EventRoundEnd         EventType = "round_end"         // Round, Usage so far
	EventCheckpointSaved  EventType = "checkpoint_saved"  // Round, Bytes
	EventCheckpointLoaded EventType = "checkpoint_loaded" // Round, Messages
	EventAgentResumed     EventType = "agent_resumed"     // Strategy, Sealed, Finished, Awaiting, Applied, Dropped, Resumed
	EventApprovalRequired EventType = "approval_required" // Round, Call: a call waits for a person's decision
	EventApprovalDecided  EventType = "approval_decided"  // Round, Call, Status approved or denied, Reason
	EventEffectsApplied   EventType = "effects_applied"   // Round, Call, Paths: a call's changes reached the workspace
	EventFilesChanged     EventType = "files_changed"     // Text: files changed outside the agent, as the model is told
	EventWarning          EventType = "warning"           // Text
	EventTodos            EventType = "todos"             // Round, Todos: the task list a committed round wrote
	EventRunEnd           EventType = "run_end"           // Status, Reason, Round, Usage

	// EventContextCompacted: Round, Compaction, Usage of its summary: the
	// conversation the model is sent was cut (see ContextSpec).
	EventContextCompacted EventType = "context_compacted"
)

// Event is one thing that happened in a run. Fields that do not apply to a
// type are zero and left out of its JSON.
type Event struct {
	Type  EventType `json:"type"`
	Time  time.Time `json:"time"`
	Agent string    `json:"agent"`
	Run   string    `json:"run"`
	// Parent and Depth place a sub-agent's events in its tree.
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth,omitempty"`
	Round  int    `json:"round,omitempty"`

	ResumedFrom string `json:"resumed_from,omitempty"`
	Text        string `json:"text,omitempty"`
	Calls       int    `json:"calls,omitempty"`
	Call        *Call  `json:"call,omitempty"`

	Usage    *conversation.Usage `json:"usage,omitempty"`
	Bytes    int64               `json:"bytes,omitempty"`
	Messages int                 `json:"messages,omitempty"`
	Strategy string              `json:"strategy,omitempty"`
	Status   Status              `json:"status,omitempty"`
	Reason   string              `json:"reason,omitempty"`
	Sealed   []Seal              `json:"sealed,omitempty"`
	Finished []string            `json:"finished,omitempty"`
	Awaiting []string            `json:"awaiting,omitempty"`
	Applied  []string            `json:"applied,omitempty"`
	Dropped  []string            `json:"dropped,omitempty"`
	Resumed  []string            `json:"resumed,omitempty"`
	Paths    []string            `json:"paths,omitempty"`
	Labels   *checkpoint.Labels  `json:"labels,omitempty"`
	Todos    []checkpoint.Todo   `json:"todos,omitempty"`

	Compaction *checkpoint.Compaction `json:"compaction,omitempty"`

	// Removed is set on the warning a history trimmed by `cairn gc
	// --keep-rounds` starts with (checkpoint.TrimmedEvents): how many of
	// its lines were removed, in all, with Round the oldest round kept.
	Removed int64 `json:"removed,omitempty"`
}

// Skipped reports whether e is ReadHistory's warning in the place of a
// line of the history that is not an event: a warning of no run (every
// warning a run emits names its run). A caller that keeps one run's or
// one agent's events keeps these too, since the line left out may have
// been of any.
func (e Event) Skipped() bool { return e.Type == EventWarning && e.Run == "" }

// Trimmed reports whether e is the warning a history that `cairn gc
// --keep-rounds` trimmed starts with, in the place of the lines removed
// (Removed of them): a warning of no run too, which Skipped keeps.
func (e Event) Trimmed() bool { return e.Type == EventWarning && e.Run == "" && e.Removed > 0 }

// Call describes one tool call in an event.
type Call struct {
	ID         string  `json:"id"`
	Tool       string  `json:"tool"`
	Input      string  `json:"input,omitempty"`
	Outcome    Outcome `json:"outcome,omitempty"`
	Output     string  `json:"output,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Unsandboxed marks a call of an MCP server's tool, which runs
	// outside the sandbox.
	Unsandboxed bool `json:"unsandboxed,omitempty"`
	// Stderr is the tool's log (capped by the sandbox's stderr limit),
	// for the user: the model reads only its tail, and only when the call
	// failed (see abi, "One call").
	Stderr string `json:"stderr,omitempty"`
	// Net is what the call sent and received over the network.
	Net *NetUsage `json:"net,omitempty"`
}

// Outcome is how a tool call ended.
type Outcome string

// The outcomes of a call.
const (
	OutcomeOK    Outcome = "ok"    // the tool answered
	OutcomeError Outcome = "error" // the tool, its arguments or its sandbox failed; the model got the error
	// OutcomeConflict: the tool answered, but changes it made were
	// refused (the file changed since the agent read it, or an earlier
	// call of the round changed it); the model got which and why.
	OutcomeConflict Outcome = "conflict"
	// OutcomeUnsettled: the tool answered with changes, and the run
	// stopped (a pause, a signal, a limit) before the round settled them:
	// resume settles them, applying or refusing each, and the model reads
	// which. Its output is the tool's.
	OutcomeUnsettled Outcome = "unsettled"
)

// Status is how a run ended.
type Status string

// The statuses of a run.
const (
	StatusDone             Status = "done"              // the model answered without tool calls
	StatusPaused           Status = "paused"            // stopped at a boundary; resume continues
	StatusAwaitingApproval Status = "awaiting_approval" // a call waits for a person's decision
	StatusFailed           Status = "failed"            // an error the run could not go on from
)

// EventFunc receives events. It is called from the goroutine running the
// loop, one event at a time, in order.
type EventFunc func(Event)
