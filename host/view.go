package host

import (
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// RunView is one run of an agent as a listing shows it.
type RunView struct {
	Run         string     `json:"run"`
	ResumedFrom string     `json:"resumed_from,omitempty"`
	Strategy    string     `json:"strategy,omitempty"`
	Started     time.Time  `json:"started"`
	Ended       *time.Time `json:"ended,omitempty"`
	FirstRound  int        `json:"first_round"`
	Rounds      int        `json:"rounds"`
	Status      string     `json:"status"`
	Reason      string     `json:"reason,omitempty"`
}

// Runs lists the runs of an inspected agent, oldest first. A run's rounds
// reach to where the next run started, or to the boundary for the last
// one; a run with no end is running while a process holds the agent, else
// interrupted.
func (in *Inspection) Runs() []RunView {
	runs := in.State.Runs
	out := make([]RunView, len(runs))
	for i, r := range runs {
		last := in.State.Round
		if i+1 < len(runs) {
			last = runs[i+1].FirstRound
		}
		out[i] = RunView{Run: r.ID, ResumedFrom: r.ResumedFrom, Strategy: r.Strategy, Started: r.Started,
			FirstRound: r.FirstRound, Rounds: last - r.FirstRound, Status: string(r.Status), Reason: r.Reason}
		if !r.Ended.IsZero() {
			out[i].Ended = &runs[i].Ended
		}
		if out[i].Status == "" {
			out[i].Status = "running"
			if i+1 < len(runs) || !in.Summary.Locked {
				out[i].Status = "interrupted"
			}
		}
	}
	return out
}

// InterruptedCalls lists the calls an interrupted round had asked for,
// each as its id and tool name; none when no round was interrupted.
func (in *Inspection) InterruptedCalls() []string {
	var ids []string
	for _, r := range in.Tail {
		if r.Type == checkpoint.RecTurn && r.Message != nil {
			for _, tc := range r.Message.ToolCalls {
				ids = append(ids, tc.ID+" "+tc.Name)
			}
		}
	}
	return ids
}
