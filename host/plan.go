package host

import (
	"context"
	"errors"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// awaitingError ends a run whose round has calls waiting for a person.
type awaitingError struct{ calls []conversation.ToolCall }

func (e *awaitingError) Error() string { return awaitingCalls(e.calls) }

// playCalls takes a round's calls through approval and runs the ones that
// may run. last holds the newest phase record the journal has of each call
// (on resume); a call it does not name is new and meets the approval rules
// of the agent file and of the agents above it (judge). It returns the
// results to journal and the calls still waiting for a decision.
//
// A call that needs a person is journaled as approval_required and synced
// before anyone is asked, so the request survives a crash; each decision
// is journaled as it is made.
func (r *run) playCalls(ctx context.Context, round int, calls []conversation.ToolCall,
	last map[string]checkpoint.Record) ([]callResult, []conversation.ToolCall, error) {
	if err := r.restoreAncestry(ctx); err != nil {
		return nil, nil, err
	}
	var toRun, toAsk []conversation.ToolCall
	var results []callResult
	var asked []checkpoint.Record
	for _, c := range calls {
		switch rec := last[c.ID]; rec.Phase {
		case checkpoint.PhaseApproved, checkpoint.PhaseExecuting:
			// Executing: a call resume runs again (see resumeReport.Resumed).
			toRun = append(toRun, c)
			continue
		case checkpoint.PhaseApprovalRequired:
			toAsk = append(toAsk, c)
			continue
		case checkpoint.PhaseDenied:
			results = append(results, denial(c, rec.Reason))
			continue
		}
		switch v := r.judge(c); v.action {
		case ActionDeny:
			results = append(results, denial(c, v.denial()))
			// A call a rule denies never starts: this event is all that
			// shows it, on a terminal, in the web view and to an MCP log.
			r.emit(Event{Type: EventApprovalDecided, Round: round, Call: &Call{ID: c.ID, Tool: c.Name},
				Status: "denied", Reason: v.denial()})
		case ActionAsk:
			toAsk = append(toAsk, c)
			asked = append(asked, phaseRecord(round, c, checkpoint.PhaseApprovalRequired, ""))
		default:
			toRun = append(toRun, c)
		}
	}
	if len(asked) > 0 {
		if err := errors.Join(r.log.Append(asked...), r.log.Sync()); err != nil {
			return nil, nil, err
		}
	}
	approved, denied, waiting, err := r.ask(ctx, round, toAsk)
	if err != nil {
		return nil, nil, err
	}
	results = append(results, denied...)
	// A turn with a call that needs a person is durable already (synced
	// with its approval_required record): its calls' executing records
	// and every decision made here are durable too before any call runs.
	toRun = append(toRun, approved...)
	if inFlight, rest := r.inFlightFirst(toRun, last); len(inFlight) > 0 && len(rest) > 0 {
		// A resumed call whose work had begun (a delegation, whose child
		// may have a finished call still to apply) finishes before any
		// other starts: a call that starts after the stop must not change
		// what one before it had already done. The last of them is synced,
		// since the round's commit does not follow it.
		ran, err := r.runCalls(ctx, round, inFlight, len(toAsk) > 0)
		results = append(results, ran...)
		if err == nil && stopOf(ran) == nil && ctx.Err() == nil {
			err = r.log.Sync()
		}
		if err != nil || stopOf(ran) != nil || ctx.Err() != nil {
			return results, waiting, err
		}
		toRun = rest
	}
	ran, err := r.runCalls(ctx, round, toRun, len(toAsk) > 0)
	return append(results, ran...), waiting, err
}

// inFlightFirst splits the calls to run into those a stop left in flight
// with their work begun (journaled executing, and begun as their tool can
// tell: a delegation whose child exists) and the rest.
func (r *run) inFlightFirst(calls []conversation.ToolCall, last map[string]checkpoint.Record) (inFlight, rest []conversation.ToolCall) {
	for _, c := range calls {
		if last[c.ID].Phase == checkpoint.PhaseExecuting && r.tools.begun(r, c) {
			inFlight = append(inFlight, c)
		} else {
			rest = append(rest, c)
		}
	}
	return inFlight, rest
}

// ask puts each call to the run's approver, journaling every decision.
// Without an approver, or when it cannot ask, a call is denied if the run
// is unattended (AutoDeny) and otherwise left waiting.
func (r *run) ask(ctx context.Context, round int, calls []conversation.ToolCall) (
	approved []conversation.ToolCall, denied []callResult, waiting []conversation.ToolCall, err error) {
	for _, c := range calls {
		r.emit(Event{Type: EventApprovalRequired, Round: round, Call: &Call{ID: c.ID, Tool: c.Name, Input: c.Input,
			Unsandboxed: r.tools.unsandboxed(c.Name)}})
		r.releaseEvents() // seen before the decision, which may take a person
		d, err := r.decision(ctx, round, c)
		switch {
		case errors.Is(err, ErrNoDecision) && r.autoDeny:
			d = Decision{Reason: "no one was there to approve it (the run is unattended and denies what needs approval)"}
		case errors.Is(err, ErrNoDecision):
			waiting = append(waiting, c)
			continue
		case err != nil:
			return nil, nil, nil, err
		}
		if !d.Approved && d.Reason == "" {
			d.Reason = "a person denied it"
		}
		if err := r.log.Append(decisionRecord(round, c, d)); err != nil {
			return nil, nil, nil, err
		}
		r.emit(Event{Type: EventApprovalDecided, Round: round, Call: &Call{ID: c.ID, Tool: c.Name},
			Status: decisionStatus(d), Reason: d.Reason})
		if d.Approved {
			approved = append(approved, c)
		} else {
			denied = append(denied, denial(c, d.Reason))
		}
	}
	return approved, denied, waiting, nil
}

func (r *run) decision(ctx context.Context, round int, c conversation.ToolCall) (Decision, error) {
	if r.approver == nil {
		return Decision{}, ErrNoDecision
	}
	defer r.idle()()
	return r.approver(ctx, ApprovalRequest{Agent: r.agentID, Round: round, Call: Call{ID: c.ID, Tool: c.Name, Input: c.Input}})
}

func phaseRecord(round int, c conversation.ToolCall, p checkpoint.Phase, reason string) checkpoint.Record {
	return checkpoint.Record{Type: checkpoint.RecPhase, Time: now(), Round: round, Call: c.ID, Tool: c.Name,
		Phase: p, Reason: reason}
}

// decisionRecord journals a person's decision on a call.
func decisionRecord(round int, c conversation.ToolCall, d Decision) checkpoint.Record {
	if d.Approved {
		return phaseRecord(round, c, checkpoint.PhaseApproved, "")
	}
	return phaseRecord(round, c, checkpoint.PhaseDenied, d.Reason)
}

func decisionStatus(d Decision) Status {
	if d.Approved {
		return "approved"
	}
	return "denied"
}
