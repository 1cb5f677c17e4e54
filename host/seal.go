package host

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// Seal is what resume says of a call that was in flight when the process
// stopped: how far it got, what it changed, and what to do.
type Seal struct {
	Call  string           `json:"call"`
	Tool  string           `json:"tool"`
	Phase checkpoint.Phase `json:"phase"`
	// Effects says what the call changed: "none" in the workspace for
	// every call in flight, because a call's changes are staged and reach
	// it only after its result is journaled; "unknown" for a call of an
	// MCP server, or one that sent a request not safe to repeat (POST,
	// PUT, PATCH, DELETE), which may have acted on the remote side.
	Effects        string `json:"effects"`
	Recommendation string `json:"recommendation"`
	// Net is the call's HTTP exchanges as the journal left them: each
	// request sent (or refused) and whether its response was received.
	Net []SealedExchange `json:"net,omitempty"`
	// StoppedBy names what ended the call in flight, the run stopping
	// with its round open ("max_time"); "" when the process stopped or
	// died with it, or when the journal does not say.
	StoppedBy string `json:"stopped_by,omitempty"`
	// Earlier says that an earlier resume sealed the call, and journaled
	// the result that says so, in a round still open (it stopped again,
	// awaiting approval of another call, or paused).
	Earlier bool `json:"earlier,omitempty"`
	// exchanges are the call's exchanges, each as the journal left it,
	// for the sealed result: what it sent counts and is shown as a
	// finished call's does.
	exchanges []conversation.Exchange
}

// Effects of a call.
const (
	EffectsNone    = "none"
	EffectsApplied = "all applied"
	EffectsUnknown = "unknown"
)

// inspect reads the interrupted round: which calls finished (kept, never
// run again), which wait for or have a person's decision (taken up where
// they stood), and which were in flight (sealed).
func (r *run) inspect(rec *checkpoint.Recovered) resumeReport {
	report := resumeReport{Boundary: rec.State.Round, last: map[string]checkpoint.Record{}}
	turn, _ := tailTurn(rec.Tail)
	if turn == nil {
		return report
	}
	finished, sealed := map[string]bool{}, map[string]bool{}
	exchanges := map[string][]SealedExchange{}
	journaled := map[string][]conversation.Exchange{}
	for _, t := range rec.Tail {
		switch t.Type {
		case checkpoint.RecExchange:
			exchanges[t.Call] = addExchange(exchanges[t.Call], *t.Exchange)
			journaled[t.Call] = endExchange(journaled[t.Call], *t.Exchange)
		case checkpoint.RecPhase:
			report.last[t.Call] = t
		case checkpoint.RecResult:
			s := t.Result != nil && t.Result.Sealed
			finished[t.Call], sealed[t.Call] = !s, s
		}
	}
	for _, c := range turn.ToolCalls {
		report.tailCalls = append(report.tailCalls, c.ID)
		p := report.last[c.ID].Phase
		switch {
		case sealed[c.ID]:
			s := r.seal(c, cmp.Or(p, checkpoint.PhasePending), exchanges[c.ID])
			s.StoppedBy = report.last[c.ID].Stopped
			s.Earlier = true
			report.Sealed = append(report.Sealed, s)
		case finished[c.ID]:
			report.Finished = append(report.Finished, c.ID)
		case p == checkpoint.PhaseApprovalRequired || p == checkpoint.PhaseApproved || p == checkpoint.PhaseDenied:
			report.Awaiting = append(report.Awaiting, c.ID)
		case (p == checkpoint.PhaseExecuting || p == "") && r.tools.resumesInFlight(c.Name):
			report.Resumed = append(report.Resumed, c.ID)
		default:
			if p == "" {
				p = checkpoint.PhasePending
			}
			s := r.seal(c, p, exchanges[c.ID])
			s.StoppedBy = report.last[c.ID].Stopped
			s.exchanges = journaled[c.ID]
			report.Sealed = append(report.Sealed, s)
		}
	}
	return report
}

func (r *run) seal(c conversation.ToolCall, p checkpoint.Phase, net []SealedExchange) Seal {
	if sent := sentExchanges(net); len(sent) > 0 {
		return netSeal(c, p, net, sent)
	}
	if r.tools.unsandboxed(c.Name) && p == checkpoint.PhaseExecuting {
		return Seal{Call: c.ID, Tool: c.Name, Phase: p, Effects: EffectsUnknown,
			Recommendation: "check what the MCP server did before calling it again: it runs outside the sandbox, so its changes were not staged"}
	}
	return Seal{Call: c.ID, Tool: c.Name, Phase: p, Effects: EffectsNone,
		Recommendation: "retry: the call did not finish and changed nothing"}
}

// message is the result the model reads for a sealed call.
func (s Seal) message() string {
	effects := "Its effects on the workspace: " + s.Effects + "."
	if len(s.Net) > 0 && s.Effects == EffectsUnknown {
		// What it staged was dropped; what it sent may have acted remotely.
		effects = remoteUnknown
	}
	stopped, partly := "cairn stopped", ""
	if s.StoppedBy == checkpoint.StoppedMaxTime {
		stopped, partly = "max_time, the time limit of the agent's run, stopped it", " (it may have done part of its work)"
	}
	return fmt.Sprintf(sealPrefix+"%s while it was %s, and it did not finish%s. "+
		"%s%s Recommendation: %s.", stopped, s.Phase, partly, effects, netMessage(s.Net), s.Recommendation)
}

// The words of a seal's message that EffectsUnknownSeal reads.
const (
	sealPrefix    = "This call was interrupted: "
	remoteUnknown = "Its effects on the workspace: none (its changes were not kept); on the remote side: unknown."
)

// EffectsUnknownSeal reports whether text reads as the result resume
// wrote for a call in flight at a stop whose effects are unknown
// (EffectsUnknown): an MCP server's call, or one that sent a request not
// safe to repeat. Made again, such a call could do twice what it did.
//
// Resume marks such a seal in its record (checkpoint.Result.EffectsUnknown,
// carried to the tool message), and that mark is what to read: words
// change, and any tool's output may quote them. This reads the words of
// the seals journaled before the mark existed, which have nothing else.
func EffectsUnknownSeal(text string) bool {
	return strings.HasPrefix(text, sealPrefix) &&
		(strings.Contains(text, "Its effects on the workspace: "+EffectsUnknown+".") || strings.Contains(text, remoteUnknown))
}
