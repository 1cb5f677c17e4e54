package checkpoint

import (
	"fmt"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// schemaVersion is the newest version of State and the records this
// package reads; a reader refuses anything newer. A state is written at
// the oldest version that holds all it says (schemaOf), so that a cairn
// too old for a state refuses it rather than read it leaving out what it
// does not know.
const schemaVersion = schemaAbove

const (
	// schemaPlain is the version of the records, and of every state
	// but those of schemaAbove.
	schemaPlain = 2
	// schemaAbove is a state whose definition keeps agent files above
	// the agent (Definition.Above), whose approval rules bind it: a cairn
	// that reads only schemaPlain would resume it under its own rules.
	schemaAbove = 3
)

// schemaOf is the version a state of that definition is written at.
func schemaOf(def Definition) int {
	if len(def.Above) > 0 {
		return schemaAbove
	}
	return schemaPlain
}

// State is an agent's loop state at a boundary.
type State struct {
	Schema int    `cbor:"1,keyasint"`
	Agent  string `cbor:"2,keyasint"`
	// Round is the number of committed rounds.
	Round    int                    `cbor:"3,keyasint"`
	Messages []conversation.Message `cbor:"4,keyasint"`
	// Usage and ToolCalls add up every round the agent has committed.
	Usage     conversation.Usage `cbor:"5,keyasint"`
	ToolCalls int                `cbor:"6,keyasint"`
	// TaskRounds counts rounds since the last user prompt: what a round
	// limit is measured against, across resumes.
	TaskRounds int        `cbor:"7,keyasint"`
	Runs       []RunInfo  `cbor:"8,keyasint"`
	Labels     Labels     `cbor:"9,keyasint"`
	Lineage    *Lineage   `cbor:"10,keyasint,omitempty"`
	Definition Definition `cbor:"11,keyasint"`
	Status     Status     `cbor:"12,keyasint"`
	Reason     string     `cbor:"13,keyasint,omitempty"`
	UpdatedAt  time.Time  `cbor:"14,keyasint"`
	Todos      []Todo     `cbor:"15,keyasint,omitempty"`
	// Files is the file pool: what the agent's tools read and wrote, by
	// path, at most MaxFileEntries of them.
	Files []FileEntry `cbor:"16,keyasint,omitempty"`
	// Parent says, of a sub-agent, which agent's call made it.
	Parent *Parent `cbor:"65,keyasint,omitempty"`
	// Compactions are the cuts of the conversation the model is sent, in
	// order (see Compaction); Messages keeps every message all the same.
	Compactions []Compaction `cbor:"45,keyasint,omitempty"`
	// WorkspaceBase is the digest of the manifest blob of the workspace
	// as it was when the agent was made (see Timeline), when the store
	// keeps one: it is in the store before the agent is.
	WorkspaceBase string `cbor:"50,keyasint,omitempty"`
	// Prompt is the prompt the agent was made with, kept in its first
	// state until its first run starts: that run's start record, written
	// with the prompt's, clears it. A stop in between loses no prompt:
	// the agent's resume gives it. Empty once a run has started, and for
	// an agent made without a prompt or by a cairn that did not keep it.
	Prompt string `cbor:"17,keyasint,omitempty"`
}

// Status is where an agent stands.
type Status string

// The statuses of an agent.
const (
	StatusIdle     Status = "idle"    // created, never run
	StatusRunning  Status = "running" // a run started and has not ended
	StatusDone     Status = "done"    // the last run ended with the model's answer
	StatusPaused   Status = "paused"  // the last run stopped at a boundary; resume continues
	StatusApproval Status = "awaiting_approval"
	StatusFailed   Status = "failed"
)

// RunInfo is one run of the agent.
type RunInfo struct {
	ID          string    `cbor:"1,keyasint"`
	ResumedFrom string    `cbor:"2,keyasint,omitempty"`
	Strategy    string    `cbor:"3,keyasint,omitempty"`
	Started     time.Time `cbor:"4,keyasint"`
	Ended       time.Time `cbor:"5,keyasint,omitempty"`
	Status      Status    `cbor:"6,keyasint,omitempty"`
	Reason      string    `cbor:"7,keyasint,omitempty"`
	// FirstRound is the agent's round count when the run started.
	FirstRound int `cbor:"8,keyasint"`
}

// Labels identify an agent to the systems around it; they are carried in
// every event and restored on resume.
type Labels struct {
	Tenant      string `cbor:"1,keyasint,omitempty" json:"tenant,omitempty"`
	Principal   string `cbor:"2,keyasint,omitempty" json:"principal,omitempty"`
	Template    string `cbor:"3,keyasint,omitempty" json:"template,omitempty"`
	Correlation string `cbor:"4,keyasint,omitempty" json:"correlation,omitempty"`
}

// Lineage says what an agent was forked from.
type Lineage struct {
	Agent string `cbor:"1,keyasint" json:"agent"`
	Round int    `cbor:"2,keyasint" json:"round"`
	Label string `cbor:"3,keyasint,omitempty" json:"label,omitempty"`
}

// Definition is what the agent is made of, kept in the store so resume runs
// exactly what the agent started with, on any machine that has the store.
type Definition struct {
	// AgentFile is the blob digest of the agent file's bytes; AgentPath
	// and AgentDir are where it was read from.
	AgentFile string `cbor:"1,keyasint"`
	AgentPath string `cbor:"2,keyasint,omitempty"`
	AgentDir  string `cbor:"3,keyasint,omitempty"`
	// Modules maps each tool module, as the agent file names it, to the
	// blob digest of its bytes.
	Modules map[string]string `cbor:"4,keyasint,omitempty"`
	// Script is the blob digest of the script model's file, if any.
	Script    string `cbor:"5,keyasint,omitempty"`
	Workspace string `cbor:"6,keyasint"`
	// Above are, for an agent made from a sub-agent's definition in
	// another agent file rather than by a delegation (a workflow's
	// delegation step), that agent file and any above it, nearest first:
	// their approval rules bind the agent's calls and its sub-agents',
	// and their sandbox limits are the ones it leaves out, on every
	// resume as on its first run. Empty for every other agent (a
	// sub-agent's are its parent's, read along Parent), and for such an
	// agent that a cairn which did not keep them made.
	Above []AboveFile `cbor:"7,keyasint,omitempty"`
}

// AboveFile is an agent file above an agent (Definition.Above): the blob
// digest of its bytes, and where it was read from.
type AboveFile struct {
	File string `cbor:"1,keyasint"`
	Path string `cbor:"2,keyasint,omitempty"`
	Dir  string `cbor:"3,keyasint,omitempty"`
}

// Todo is one item of the agent's own task list, which the model writes
// with the todo_write tool.
type Todo struct {
	Text   string     `cbor:"1,keyasint" json:"content"`
	Status TodoStatus `cbor:"3,keyasint" json:"status"`
}

// TodoStatus is where an item of the task list stands.
type TodoStatus string

// The statuses of a task list's item.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoDone       TodoStatus = "done"
)

// TodoList is a whole task list as a call's result carries it: it
// replaces the agent's list when the call's round commits.
type TodoList struct {
	Items []Todo `cbor:"1,keyasint"`
}

// Parent is a sub-agent's lineage: the agent whose call made it, that
// call, the sub-agent's name in the parent's agent file, and its depth
// (1 for a child of a top-level agent).
type Parent struct {
	Agent string `cbor:"1,keyasint" json:"agent"`
	Call  string `cbor:"2,keyasint" json:"call"`
	Name  string `cbor:"3,keyasint,omitempty" json:"name,omitempty"`
	Depth int    `cbor:"4,keyasint" json:"depth"`
}

// NewState is the state of a new agent.
func NewState(agent string, def Definition, labels Labels, now time.Time) *State {
	return &State{Schema: schemaOf(def), Agent: agent, Definition: def, Labels: labels,
		Status: StatusIdle, UpdatedAt: now}
}

// LastRun is the agent's most recent run, or nil.
func (s *State) LastRun() *RunInfo {
	if len(s.Runs) == 0 {
		return nil
	}
	return &s.Runs[len(s.Runs)-1]
}

// Clone returns a deep copy of the state, made through its encoding.
func (s *State) Clone() (*State, error) {
	b, err := encodeState(s)
	if err != nil {
		return nil, fmt.Errorf("copy state: %w", err)
	}
	c, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("copy state: %w", err)
	}
	return c, nil
}

// applyResult makes what a committed call's result carries besides its
// output part of the state: a task list, the tokens and cost it spent,
// the requests it sent.
func (s *State) applyResult(r *Result) {
	s.Usage = s.Usage.AddNet(r.Net)
	if r.Todos != nil {
		s.Todos = append([]Todo(nil), r.Todos.Items...)
	}
	if r.Usage != nil {
		s.Usage = s.Usage.Add(*r.Usage)
	}
}
