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
// checkpoint.ErrNotFound for an unknown agent; checkpoint.ErrLocked while
// a process still runs it and the call awaits a decision, once the run's
// round runs no other call beside it, or after decideRunWait (see
// lockToDecide); ErrNotAwaiting when the call does not wait for one (the
// error lists those that do).
func (e *Engine) Decide(ctx context.Context, id, call string, d Decision) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	lock, err := e.lockToDecide(ctx, id, call)
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

// decideHeldWait is how long a decision waits for a process that holds
// the agent to let go, once no call of a run's round is seen running beside
// the one to decide: a run that asked for the decision stops awaiting it
// once the round's other calls have run, and a decision made then is
// recorded, where one refused at once would be asked for again.
const decideHeldWait = 2 * time.Second

// decideRunWait bounds how long a decision waits for a run whose round
// still runs other calls beside the one to decide (a module compiled cold,
// a guest that runs long, a sub-agent): such a run is on its way to the
// stop at the approval, and is waited for as long as it is, up to this.
const decideRunWait = 5 * time.Minute

// decideLookEvery is how often a decision that waits for a run reads the
// agent's journal to see which of its calls still run.
const decideLookEvery = 200 * time.Millisecond

// lockToDecide takes agent id's lock to record a decision on call. While
// a run holds it, and the run's round still runs other calls beside call,
// which awaits the decision, it waits for the run to stop at the approval,
// up to decideRunWait; then, or when a process that runs no such calls
// holds it, up to decideHeldWait more.
//
// # Errors
//
// checkpoint.ErrLocked (a *checkpoint.LockedError, wrapped) when a
// process still holds it then, saying what was waited for, that the agent
// runs and asks again for each call that awaits a decision, and how to
// decide it once the run stops; ctx's end likewise; the store's.
func (e *Engine) lockToDecide(ctx context.Context, id, call string) (checkpoint.Lock, error) {
	start := time.Now()
	quiet := start.Add(decideHeldWait)
	var running []string
	var looked time.Time
	for {
		lock, err := e.store.Lock(id, checkpoint.ThisProcess("decide"))
		if !errors.Is(err, checkpoint.ErrLocked) {
			return lock, err
		}
		now := time.Now()
		if now.Sub(looked) >= decideLookEvery {
			running, looked = e.runningBeside(id, call), now
			if len(running) > 0 {
				quiet = now.Add(decideHeldWait)
			}
		}
		switch {
		case len(running) > 0 && (now.Sub(start) > decideRunWait || ctx.Err() != nil):
			return nil, fmt.Errorf("agent %q is running: its round still runs %s beside %s, which awaits the decision, "+
				"and no decision was recorded after waiting %s for the round's calls to end; the run stops awaiting approval once they do "+
				"(`cairn show %s` says when), and then `cairn approve` or `cairn deny` records it and a resume goes on; %w",
				id, strings.Join(running, ", "), call, now.Sub(start).Round(time.Second), id, err)
		case now.After(quiet) || ctx.Err() != nil:
			return nil, fmt.Errorf("agent %q is running, so no decision was recorded: the run asks again for each call that still awaits one, "+
				"and stops awaiting approval if none is given (then decide it with `cairn approve` or `cairn deny`, and resume it); %w", id, err)
		}
		time.Sleep(pauseEvery)
	}
}

// runningBeside names the calls of agent id's open round that a run still
// runs (journaled as started, with no result yet) while call awaits a
// decision, each as "ID (tool)": none when call awaits none, when the
// agent cannot be read, or when what holds the agent is not a run (a run
// that was killed leaves its calls in flight in the journal, and runs
// none of them).
func (e *Engine) runningBeside(id, call string) []string {
	if _, _, run := holderOf(e.store, id); !run {
		return nil
	}
	rec, err := e.store.Read(id)
	if err != nil {
		return nil
	}
	turn, _ := tailTurn(rec.Tail)
	if turn == nil {
		return nil
	}
	last, done := map[string]checkpoint.Phase{}, map[string]bool{}
	for _, t := range rec.Tail {
		switch t.Type {
		case checkpoint.RecPhase:
			last[t.Call] = t.Phase
		case checkpoint.RecResult:
			done[t.Call] = true
		}
	}
	if last[call] != checkpoint.PhaseApprovalRequired {
		return nil
	}
	var out []string
	for _, c := range turn.ToolCalls {
		if c.ID != call && !done[c.ID] && (last[c.ID] == checkpoint.PhaseExecuting || last[c.ID] == checkpoint.PhaseApproved) {
			out = append(out, c.ID+" ("+c.Name+")")
		}
	}
	return out
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
