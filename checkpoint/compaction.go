package checkpoint

import "fmt"

// RecCompaction is a standalone record: the conversation the model is sent
// was cut (Compaction). Its value is taken from the range kept for the
// bounded model context, away from the record types numbered in sequence.
const RecCompaction RecordType = 45

// Compaction is one cut of the conversation the model is sent. The
// messages themselves stay in State.Messages: a cut only says where the
// request starts, and what stands in for the messages before it, so that a
// resumed run rebuilds exactly the request the interrupted one would have
// sent.
type Compaction struct {
	// Round is the round whose request the cut was made for.
	Round int `cbor:"1,keyasint" json:"round"`
	// From is the index in State.Messages of the first message still
	// sent. It is the start of a round, so no call is parted from its
	// result.
	From int `cbor:"2,keyasint" json:"from"`
	// Pinned is the index of the task's prompt kept at the head of the
	// request although it lies before From, or -1 for none.
	Pinned int `cbor:"3,keyasint" json:"pinned"`
	// Policy is how the cut was made: "summarize" or "drop".
	Policy string `cbor:"4,keyasint" json:"policy"`
	// Summary is the model's summary of every message before From (it
	// folds in the summary of the cut before, if any); empty for drop.
	Summary string `cbor:"5,keyasint,omitempty" json:"summary,omitempty"`
	// Before and After are the request's estimated tokens before and
	// after the cut.
	Before int `cbor:"6,keyasint,omitempty" json:"before,omitempty"`
	After  int `cbor:"7,keyasint,omitempty" json:"after,omitempty"`
	// Turns is how many of the model's turns lie before From.
	Turns int `cbor:"8,keyasint,omitempty" json:"turns,omitempty"`
	// Goal is where the cut this record is a step of ends: a summary is
	// made in steps that each fit the budget, and a cut whose Goal lies
	// past its From is still under way.
	Goal int `cbor:"9,keyasint,omitempty" json:"goal,omitempty"`
	// Wording is the version of the note the cut puts at the head of a
	// request, so that a request is rebuilt as it was sent: 0, the
	// first, counts a pinned task among the messages it says are left
	// out; 1 does not.
	Wording int `cbor:"10,keyasint,omitempty" json:"wording,omitempty"`
}

// ContextFrom is the index of the first message the model is sent: the
// From of the last cut, or 0.
func (s *State) ContextFrom() int {
	if n := len(s.Compactions); n > 0 {
		return s.Compactions[n-1].From
	}
	return 0
}

// LastCompaction is the last cut of the conversation, or nil.
func (s *State) LastCompaction() *Compaction {
	if n := len(s.Compactions); n > 0 {
		return &s.Compactions[n-1]
	}
	return nil
}

// applyCompaction records a cut. A cut goes forward: it starts at or after
// the last one and within the committed conversation.
func (s *State) applyCompaction(rec Record) error {
	c := *rec.Compaction
	if c.From < s.ContextFrom() || c.From > len(s.Messages) || c.Pinned >= c.From || c.Pinned < -1 || c.Goal > len(s.Messages) {
		return fmt.Errorf("compaction at message %d (pinned %d) does not fit a conversation of %d messages cut at %d",
			c.From, c.Pinned, len(s.Messages), s.ContextFrom())
	}
	s.Compactions = append(s.Compactions, c)
	if rec.Usage != nil {
		s.Usage = s.Usage.Add(*rec.Usage) // what the summary cost
	}
	return nil
}
