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

// InterruptedCalls lists the calls of an interrupted round that had not
// finished (no result journaled), each as its id and tool name; none when
// no round was interrupted. Resume keeps a call that finished.
func (in *Inspection) InterruptedCalls() []string {
	finished := map[string]bool{}
	for _, r := range in.Tail {
		if r.Type == checkpoint.RecResult || r.Type == checkpoint.RecPhase && r.Phase == checkpoint.PhaseFinished {
			finished[r.Call] = true
		}
	}
	var ids []string
	for _, r := range in.Tail {
		if r.Type == checkpoint.RecTurn && r.Message != nil {
			for _, tc := range r.Message.ToolCalls {
				if !finished[tc.ID] {
					ids = append(ids, tc.ID+" "+tc.Name)
				}
			}
		}
	}
	return ids
}

// OpenCalls are the calls of an agent's open round that have no result
// yet (InterruptedCalls), named for what they are. While a process holds
// the agent (its status is running) they are in flight: the run is
// taking them, and they may yet finish. Otherwise the run that took them
// stopped, and they are interrupted: resume keeps or seals them. At most
// one of the two is set; `cairn show --json` and the HTTP API give both
// under these names.
type OpenCalls struct {
	InFlight    []string `json:"in_flight_calls,omitempty"`
	Interrupted []string `json:"interrupted_calls,omitempty"`
}

// OpenCalls lists the calls of the open round that have no result, as
// in flight or as interrupted (see the type).
func (in *Inspection) OpenCalls() OpenCalls {
	calls := in.InterruptedCalls()
	if in.Summary.Locked {
		return OpenCalls{InFlight: calls}
	}
	return OpenCalls{Interrupted: calls}
}

// RoundOpen reports whether a round was left uncommitted: the model's
// turn is journaled and its commit is not.
func (in *Inspection) RoundOpen() bool {
	for _, r := range in.Tail {
		if r.Type == checkpoint.RecTurn {
			return true
		}
	}
	return false
}
