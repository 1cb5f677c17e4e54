package host

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// AgentStatus is what an agent is called in a listing: running while a
// process holds it, interrupted when it stopped mid-run and needs resume,
// else how its last run ended.
func AgentStatus(s checkpoint.Summary) string {
	switch {
	case s.Err != nil:
		return "unreadable"
	case s.Locked:
		return "running"
	case s.Status == checkpoint.StatusApproval:
		return string(s.Status)
	case s.Interrupted:
		return "interrupted"
	}
	return string(s.Status)
}

// AgentLine is one agent as a listing shows it: `cairn ls --json`, and
// the fields of the HTTP API's agent list that both share.
type AgentLine struct {
	Agent     string             `json:"agent"`
	Status    string             `json:"status"`
	Rounds    int                `json:"rounds"`
	ToolCalls int                `json:"tool_calls"`
	Usage     conversation.Usage `json:"usage"`
	Updated   time.Time          `json:"updated"`
	// Error says why the agent could not be read (Status "unreadable").
	Error string `json:"error,omitempty"`
	// Parent is, for a sub-agent, the agent whose delegation made it.
	Parent string `json:"parent,omitempty"`
}

// LineOf is the listing of the agent s summarises.
func LineOf(s checkpoint.Summary) AgentLine {
	l := AgentLine{Agent: s.ID, Status: AgentStatus(s), Rounds: s.Round, ToolCalls: s.ToolCalls,
		Usage: s.Usage, Updated: s.Updated, Parent: s.Parent}
	if s.Err != nil {
		l.Error = s.Err.Error()
	}
	return l
}

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

// IsText reports whether b reads as text: valid UTF-8 with no NUL byte.
func IsText(b []byte) bool { return utf8.Valid(b) && !bytes.Contains(b, []byte{0}) }

// DiffLines is a line diff of two texts: the lines of before that after
// drops are marked "-", those it adds "+", those they share " ", by their
// longest common subsequence. Texts of more than 2,000 lines are
// summarised in one line instead.
func DiffLines(before, after []byte) []string {
	a, b := splitLines(before), splitLines(after)
	if len(a) > 2000 || len(b) > 2000 {
		return []string{fmt.Sprintf("%d lines → %d lines", len(a), len(b))}
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out, i, j = append(out, " "+a[i]), i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out, j = append(out, "+"+b[j]), j+1
		default:
			out, i = append(out, "-"+a[i]), i+1
		}
	}
	return out
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
