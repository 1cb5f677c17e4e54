package checkpoint

import (
	"fmt"
	"time"
	"unique"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// RecordType is the type byte of a frame.
type RecordType uint8

// The record types. Values are part of the file format: never reuse one.
const (
	RecHeader     RecordType = 1  // first frame of a journal or snapshot
	RecState      RecordType = 2  // a snapshot's State
	RecRunStarted RecordType = 3  // standalone: Run
	RecRunEnded   RecordType = 4  // standalone: Run with Status and Reason
	RecUser       RecordType = 5  // round: the user's prompt (Message)
	RecTurn       RecordType = 6  // round: the model's turn (Message, Usage)
	RecPhase      RecordType = 7  // round: a call changed phase (Call, Tool, Phase)
	RecResult     RecordType = 8  // round: a call's result (Call, Tool, Result)
	RecApplied    RecordType = 9  // round: a call's effects reached the workspace (Call, Files it wrote)
	RecCommit     RecordType = 10 // the round is the new boundary (Round)
	RecAbort      RecordType = 11 // the round's records are dropped (Round, Reason, Usage spent on it)
	RecDefine     RecordType = 12 // standalone: the agent's definition changes (Definition)
	RecFiles      RecordType = 13 // round: what the round's calls read and wrote (Files)
	recTypeLimit  RecordType = 14
	// RecExchange is round-scoped: one step of a call's HTTP exchange
	// (Call, Tool, Exchange). Outside the run of values above, so that
	// record kinds added beside it do not collide.
	RecExchange RecordType = 55
)

var recordNames = map[RecordType]string{
	RecHeader: "header", RecState: "state", RecRunStarted: "run_started", RecRunEnded: "run_ended",
	RecUser: "user", RecTurn: "turn", RecPhase: "phase", RecResult: "result", RecApplied: "applied",
	RecCommit: "commit", RecAbort: "abort", RecDefine: "define", RecFiles: "files",
	RecExchange:   "exchange",
	RecCompaction: "compaction",
}

func (t RecordType) String() string {
	if n, ok := recordNames[t]; ok {
		return n
	}
	return fmt.Sprintf("record type %d", uint8(t))
}

// roundScoped reports whether records of this type wait for their round's
// Commit.
func (t RecordType) roundScoped() bool {
	return t >= RecUser && t <= RecApplied || t == RecFiles || t == RecExchange
}

// Phase is where a call stands.
type Phase string

// The phases of a call, in order.
const (
	PhasePending          Phase = "pending"
	PhaseApprovalRequired Phase = "approval_required"
	PhaseApproved         Phase = "approved"
	PhaseDenied           Phase = "denied"
	PhaseExecuting        Phase = "executing"
	PhaseFinished         Phase = "finished"
)

// StoppedMaxTime is Record.Stopped of a call that max_time ended: the
// run's own, or its tree's.
const StoppedMaxTime = "max_time"

// Record is one journal entry. Type says which fields are set.
type Record struct {
	Type    RecordType            `cbor:"-"`
	Time    time.Time             `cbor:"1,keyasint,omitempty"`
	Round   int                   `cbor:"2,keyasint,omitempty"`
	Run     *RunInfo              `cbor:"3,keyasint,omitempty"`
	Message *conversation.Message `cbor:"4,keyasint,omitempty"`
	Usage   *conversation.Usage   `cbor:"5,keyasint,omitempty"`
	Call    string                `cbor:"6,keyasint,omitempty"`
	Tool    string                `cbor:"7,keyasint,omitempty"`
	Phase   Phase                 `cbor:"8,keyasint,omitempty"`
	Result  *Result               `cbor:"9,keyasint,omitempty"`
	Reason  string                `cbor:"10,keyasint,omitempty"`
	Header  *Header               `cbor:"11,keyasint,omitempty"`
	// Definition is set on RecDefine records.
	Definition *Definition `cbor:"12,keyasint,omitempty"`
	// Files are the file pool's entries a round changed (RecFiles).
	Files []FileEntry `cbor:"13,keyasint,omitempty"`
	// Writer is the epoch of the lock its writer held (RecCommit): who
	// committed the round. See FileStore.Lock.
	Writer string `cbor:"20,keyasint,omitempty"`
	// Stopped, on a RecPhase record of a call already executing, names
	// what ended the call in flight before it finished, the run stopping
	// with the round open: StoppedMaxTime. Resume's seal of the call says
	// so to the model. A crash, or a stop (Ctrl-C) of the whole run, leaves
	// none, nor do journals written before it: their seals say cairn
	// stopped. Readers that know it not take the record for one more
	// executing, which the call was.
	Stopped string `cbor:"21,keyasint,omitempty"`
	// Exchange is one step of a call's HTTP exchange (RecExchange).
	Exchange *conversation.Exchange `cbor:"55,keyasint,omitempty"`
	// Compaction is set on RecCompaction records; Usage then is what a
	// summary cost.
	Compaction *Compaction `cbor:"45,keyasint,omitempty"`
}

// Header opens every journal and snapshot.
type Header struct {
	Schema int    `cbor:"1,keyasint"`
	Agent  string `cbor:"2,keyasint"`
	Round  int    `cbor:"3,keyasint"`
}

// Result is a call's result as the model reads it.
type Result struct {
	Output  string `cbor:"1,keyasint"`
	IsError bool   `cbor:"2,keyasint,omitempty"`
	// Sealed marks a result that resume wrote for a call that was in
	// flight when the process stopped.
	Sealed     bool    `cbor:"3,keyasint,omitempty"`
	DurationMS float64 `cbor:"4,keyasint,omitempty"`
	// Effects is the call's effect manifest as the sandbox encodes it:
	// what it changed in the workspace, applied after this record is
	// durable and marked done by a RecApplied record.
	Effects []byte `cbor:"5,keyasint,omitempty"`
	// Unsettled marks a result journaled the moment its call finished,
	// before the round's calls were settled against each other and the
	// workspace: its effects are not to be applied as they are. A later
	// result of the same call replaces it; a PhaseFinished record of the
	// call says it stands as it is.
	Unsettled bool `cbor:"6,keyasint,omitempty"`
	// EffectsUnknown marks a sealed result (Sealed) of a call whose
	// effects are unknown: one of a tool outside the sandbox, or one that
	// sent a request not safe to repeat, which may have acted on the
	// remote side. Made again, such a call could do twice what it did.
	// Seals written before this field existed lack it; their words say
	// the same (see host.EffectsUnknownSeal).
	EffectsUnknown bool `cbor:"7,keyasint,omitempty"`
	// Todos, set by the task list's tool, replaces the agent's task list
	// when the round commits.
	Todos *TodoList `cbor:"65,keyasint,omitempty"`
	// Native is the effect of a host-native tool beyond the workspace
	// and the agent's state (one of package host's native tools that
	// settle), applied once this record is durable and marked done by a
	// RecApplied record.
	Native []byte `cbor:"66,keyasint,omitempty"`
	// Usage is what the call spent on models (a sub-agent's tokens and
	// cost); the round adds it to the agent's when it commits.
	Usage *conversation.Usage `cbor:"67,keyasint,omitempty"`
	// Net is the call's HTTP exchanges, each as it ended (see Exchange).
	Net []conversation.Exchange `cbor:"55,keyasint,omitempty"`
	// Recording is what the call ran with, for `cairn verify`; nil for a
	// call that ran outside the sandbox or was never run.
	Recording *conversation.Recording `cbor:"60,keyasint,omitempty"`
}

// replay applies records to a state, holding each round's records until its
// Commit. What it holds at the end is the interrupted round.
type replay struct {
	st      *State
	pending []Record
}

func (r *replay) add(rec Record) error {
	switch {
	case rec.Type.roundScoped():
		r.pending = append(r.pending, rec)
	case rec.Type == RecCommit:
		if rec.Round != r.st.Round+1 {
			return fmt.Errorf("commit of round %d follows round %d", rec.Round, r.st.Round)
		}
		r.st.applyRound(r.pending, rec)
		r.pending = nil
	case rec.Type == RecAbort:
		// The dropped round's tokens were spent all the same.
		if rec.Usage != nil {
			r.st.Usage = r.st.Usage.Add(*rec.Usage)
		}
		r.pending = nil
	case rec.Type == RecRunStarted:
		r.st.startRun(rec)
	case rec.Type == RecRunEnded:
		r.st.endRun(rec)
	case rec.Type == RecDefine:
		r.st.Definition = *rec.Definition
		r.st.Schema = max(r.st.Schema, schemaOf(r.st.Definition))
	case rec.Type == RecCompaction:
		return r.st.applyCompaction(rec)
	default:
		return fmt.Errorf("unexpected %s record in a journal", rec.Type)
	}
	return nil
}

// applyRound makes a committed round part of the state. Tool messages
// follow the order of the turn's calls, whatever order they finished in.
func (s *State) applyRound(recs []Record, commit Record) {
	results := map[string]Record{}
	var turn *conversation.Message
	for _, rec := range recs {
		switch rec.Type {
		case RecUser:
			s.Messages = append(s.Messages, *rec.Message)
			if !rec.Message.Note {
				s.TaskRounds = 0
			}
		case RecFiles:
			s.mergeFiles(rec.Files)
		case RecTurn:
			s.Messages = append(s.Messages, *rec.Message)
			turn = rec.Message
			if rec.Usage != nil {
				s.Usage = s.Usage.Add(*rec.Usage)
			}
		case RecResult:
			results[rec.Call] = rec
		}
	}
	if turn != nil {
		for _, c := range turn.ToolCalls {
			if res, ok := results[c.ID]; ok {
				s.Messages = append(s.Messages, conversation.Message{Role: conversation.RoleTool, Text: res.Result.Output,
					CallID: c.ID, ToolName: unique.Make(c.Name).Value(), IsError: res.Result.IsError, Recording: res.Result.Recording,
					Net: res.Result.Net, EffectsUnknown: res.Result.EffectsUnknown})
				s.ToolCalls++
				s.applyResult(res.Result)
			}
		}
	}
	s.Round = commit.Round
	s.TaskRounds++
	s.UpdatedAt = commit.Time
}

func (s *State) startRun(rec Record) {
	run := *rec.Run
	run.FirstRound = s.Round
	s.Runs = append(s.Runs, run)
	s.Status, s.Reason, s.UpdatedAt = StatusRunning, "", rec.Time
	s.Prompt = "" // journaled with the run's start (State.Prompt)
}

func (s *State) endRun(rec Record) {
	if last := s.LastRun(); last != nil && last.ID == rec.Run.ID {
		last.Ended, last.Status, last.Reason = rec.Time, rec.Run.Status, rec.Run.Reason
	}
	s.Status, s.Reason, s.UpdatedAt = rec.Run.Status, rec.Run.Reason, rec.Time
}
