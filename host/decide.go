package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// Decide records a person's decision on a call that awaits approval; the
// next resume of the agent runs the call or gives the model the denial.
// It takes the agent's lock for as long as it writes, so it cannot race a
// run of the agent.
//
// # Errors
//
// checkpoint.ErrNotFound for an unknown agent, checkpoint.ErrLocked while
// a process still runs it after decideHeldWait and the call awaits a
// decision, ErrNotAwaiting when the call does not wait for one (the error
// lists those that do).
func (e *Engine) Decide(ctx context.Context, id, call string, d Decision) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	lock, err := e.lockToDecide(ctx, id)
	if err != nil {
		return e.notAwaitingWhileHeld(id, call, err)
	}
	defer lock.Unlock()
	rec, log, err := e.store.Open(id)
	if err != nil {
		return err // the store's error names the agent
	}
	defer log.Close()
	waiting := awaitingDecision(rec.Tail)
	i := slices.IndexFunc(waiting, func(c conversation.ToolCall) bool { return c.ID == call })
	if i < 0 {
		return fmt.Errorf("agent %q: %s %w; %s", id, call, ErrNotAwaiting, listAwaiting(waiting))
	}
	if !d.Approved && d.Reason == "" {
		d.Reason = "a person denied it"
	}
	if err := errors.Join(log.Append(decisionRecord(rec.State.Round+1, waiting[i], d)), log.Sync()); err != nil {
		return err
	}
	e.noteDecision(id, rec.State.Round+1, waiting[i], d)
	return nil
}

// decideHeldWait is how long a decision waits for a run that holds the
// agent to let go: a run that asked for the decision stops awaiting it
// once the round's other calls have run, and a decision made then is
// recorded, where one refused at once would be asked for again.
const decideHeldWait = 2 * time.Second

// lockToDecide takes agent id's lock to record a decision, waiting up to
// decideHeldWait for a process that holds it.
//
// # Errors
//
// checkpoint.ErrLocked (a *checkpoint.LockedError, wrapped) when a
// process still holds it then, saying that the agent runs and asks again
// for each call that awaits a decision; the store's.
func (e *Engine) lockToDecide(ctx context.Context, id string) (checkpoint.Lock, error) {
	deadline := time.Now().Add(decideHeldWait)
	for {
		lock, err := e.store.Lock(id, checkpoint.ThisProcess("decide"))
		if !errors.Is(err, checkpoint.ErrLocked) {
			return lock, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("agent %q is running, so no decision was recorded: the run asks again for each call that still awaits one, "+
				"and stops awaiting approval if none is given (then decide it with `cairn approve` or `cairn deny`, and resume it); %w", id, err)
		}
		time.Sleep(pauseEvery)
	}
}

// notAwaitingWhileHeld is the error of a decision on call that could not
// take agent id's lock (err): where the agent, read without its lock,
// has no such call awaiting a decision, ErrNotAwaiting, listing those
// that do, rather than the lock's error, which says the run asks again
// for each call that awaits one; else err.
func (e *Engine) notAwaitingWhileHeld(id, call string, err error) error {
	if !errors.Is(err, checkpoint.ErrLocked) {
		return err
	}
	rec, rerr := e.store.Read(id)
	if rerr != nil {
		return err
	}
	waiting := awaitingDecision(rec.Tail)
	if slices.ContainsFunc(waiting, func(c conversation.ToolCall) bool { return c.ID == call }) {
		return err
	}
	return fmt.Errorf("agent %q is running, and its %s %w; %s", id, call, ErrNotAwaiting, listAwaiting(waiting))
}

// noteDecision adds the decision's approval_decided event to the agent's
// history, as a run adds the decisions it is told of, so that `cairn
// events` and the web view show who decided what between two runs. The
// history is best effort: a failure to write it loses the line, not the
// decision, which the journal holds.
func (e *Engine) noteDecision(id string, round int, c conversation.ToolCall, d Decision) {
	h, err := e.store.Events(id)
	if err != nil {
		return
	}
	defer h.Close()
	var line eventLine
	line.write(&Event{Type: EventApprovalDecided, Time: time.Now().UTC(), Agent: id, Round: round,
		Call: &Call{ID: c.ID, Tool: c.Name}, Status: decisionStatus(d), Reason: d.Reason}, h)
}

// Pending lists the calls of an agent that await a person's decision.
func Pending(ctx context.Context, store checkpoint.Store, id string) ([]ApprovalRequest, error) {
	if err := usableNow(ctx, store); err != nil {
		return nil, err
	}
	rec, err := store.Read(id)
	if err != nil {
		return nil, err
	}
	return awaiting(id, rec.State, rec.Tail), nil
}

// awaiting is what Pending lists, of an agent read as st and tail.
func awaiting(id string, st *checkpoint.State, tail []checkpoint.Record) []ApprovalRequest {
	var out []ApprovalRequest
	for _, c := range awaitingDecision(tail) {
		out = append(out, ApprovalRequest{Agent: id, Round: st.Round + 1,
			Call: Call{ID: c.ID, Tool: c.Name, Input: c.Input}})
	}
	return out
}

// awaitingDecision finds the calls of an open round whose newest phase is
// approval_required, in the order the model asked for them.
func awaitingDecision(tail []checkpoint.Record) []conversation.ToolCall {
	turn, _ := tailTurn(tail)
	if turn == nil {
		return nil
	}
	last := map[string]checkpoint.Phase{}
	for _, t := range tail {
		if t.Type == checkpoint.RecPhase {
			last[t.Call] = t.Phase
		}
	}
	var out []conversation.ToolCall
	for _, c := range turn.ToolCalls {
		if last[c.ID] == checkpoint.PhaseApprovalRequired {
			out = append(out, c)
		}
	}
	return out
}

func listAwaiting(waiting []conversation.ToolCall) string {
	if len(waiting) == 0 {
		return "no call of the agent awaits approval"
	}
	return strings.TrimPrefix(awaitingCalls(waiting), "awaiting approval of ") + " await approval"
}
