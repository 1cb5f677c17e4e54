package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Errors of Pause that a caller branches on.
var (
	// ErrNotRunning: no process runs the agent, so there is nothing to
	// stop; Pause records nothing.
	ErrNotRunning = errors.New("agent is not running")
	// ErrNoPause: the store keeps no pause requests (it is not a
	// checkpoint.Pauser).
	ErrNoPause = errors.New("store cannot keep pause requests")
)

// pausedOnRequest is the reason of a run that Pause stopped.
const pausedOnRequest = "paused on request"

// Pause asks whatever process runs agent id — this one or another, on
// this machine or, with a shared store, another — to stop at its next
// round boundary: after the round it is taking commits, before the next
// model call; a model request in flight is ended within a fraction of a
// second (its turn is not journaled yet, so the run stops at the boundary
// before it). That run ends paused ("paused on request"), as a first
// Ctrl-C ends it, and Resume continues it. Pause does not wait for the
// stop. A request is addressed to the run that holds the agent now: an
// agent nobody runs is refused with nothing recorded, and a run clears
// any request left over when it starts.
//
// # Errors
//
// checkpoint.ErrNotFound for an unknown agent; ErrNotRunning when no
// process runs it (the message says whether it is done, paused or awaiting
// approval, and then which calls wait and how to decide them, or, of one
// that cannot be read, why, with the store's error wrapped too);
// ErrNoPause for a store that keeps no requests.
func (e *Engine) Pause(ctx context.Context, id string) error {
	if err := e.ready(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.waitForRun(ctx, id); err != nil {
		return err
	}
	p, ok := e.store.(checkpoint.Pauser)
	if !ok {
		return fmt.Errorf("pause agent %s: %w (%T)", id, ErrNoPause, e.store)
	}
	return p.RequestPause(id)
}

// pauseHeldWait is how long Pause waits for a process that holds an
// agent's lock and runs no round (`cairn approve` journaling a decision,
// a snapshot) to let go: such a holder keeps the lock for milliseconds.
const pauseHeldWait = 2 * time.Second

// waitForRun returns nil once a run holds agent id, or a process whose
// holding the store cannot tell of; a holder that runs no round is waited
// for, briefly, and an agent no process holds then is refused as
// notRunning says, so that a pause request is left only for a run that
// will read it.
//
// # Errors
//
// The store's; ErrNotRunning when no run holds the agent, once the
// holder that runs no round let go, or after pauseHeldWait, saying which
// process holds it and what it does.
func (e *Engine) waitForRun(ctx context.Context, id string) error {
	deadline := time.Now().Add(pauseHeldWait)
	for {
		sum, err := e.store.Summary(id)
		if err != nil {
			return err // the store's error names the agent
		}
		if !sum.Locked {
			return notRunning(e.store, sum)
		}
		h, held, run := holderOf(e.store, id)
		if run {
			return nil
		}
		if held && (time.Now().After(deadline) || ctx.Err() != nil) {
			return fmt.Errorf("agent %s is held by process %d on %s (%s), which runs no round: %w, nothing to pause; "+
				"it lets go once it is done, and then the agent is as `cairn show %s` says", id, h.PID, h.Host, h.Run, ErrNotRunning, id)
		}
		time.Sleep(pauseEvery)
	}
}

// holderOf is the holder of agent id's lock: run when it is a run (runs
// take the lock as "run-…"), or when who holds it cannot be told (a store
// that cannot say, a holder that cannot be read), which is taken for a
// run; held, with h, when it is a process that runs no round; neither
// when no process holds the lock now.
func holderOf(store checkpoint.Store, id string) (h checkpoint.Holder, held, run bool) {
	q, ok := store.(checkpoint.HolderQuery)
	if !ok {
		return h, false, true
	}
	h, locked, err := q.Holder(id)
	switch {
	case err != nil || locked && (h == checkpoint.Holder{} || strings.HasPrefix(h.Run, "run-")):
		return h, false, true
	case !locked:
		return h, false, false
	}
	return h, true, false
}

// notRunning says why an agent no process runs has nothing to pause, and
// how to go on. An agent that cannot be read says why, with the store's
// error, which it wraps too (its Summary has no status to give). An agent
// awaiting a decision is named first, with the calls that wait and the
// commands that decide them: its round is open, but resume alone would
// only ask again.
func notRunning(store checkpoint.Store, sum checkpoint.Summary) error {
	if sum.Err != nil {
		return fmt.Errorf("agent %s is unreadable: %w, nothing to pause; %w", sum.ID, ErrNotRunning, sum.Err)
	}
	if what, how := awaitingAdvice(store, sum.ID); what != "" {
		return fmt.Errorf("agent %s is %s: %w, nothing to pause; %s", sum.ID, what, ErrNotRunning, how)
	}
	switch {
	case sum.Status == checkpoint.StatusDone && !sum.Interrupted:
		return fmt.Errorf("agent %s is done: %w, nothing to pause", sum.ID, ErrNotRunning)
	case sum.Interrupted:
		return fmt.Errorf("agent %s stopped during a run: %w, nothing to pause; continue it with `cairn resume %s`",
			sum.ID, ErrNotRunning, sum.ID)
	}
	return fmt.Errorf("agent %s is %s: %w, nothing to pause", sum.ID, sum.Status, ErrNotRunning)
}

// awaitingAdvice says, of an agent whose calls await a decision, which
// (what) and how to decide them, as `cairn run` says it; of one awaiting
// its sub-agent's decision, the reason its run ended with, which names
// the sub-agent and the commands. what is "" when nothing awaits a
// decision.
func awaitingAdvice(store checkpoint.Store, id string) (what, how string) {
	rec, err := store.Read(id)
	if err != nil {
		return "", ""
	}
	return awaitingAdviceOf(rec, id)
}

// awaitingAdviceOf is awaitingAdvice of rec, the agent id as read.
func awaitingAdviceOf(rec *checkpoint.Recovered, id string) (what, how string) {
	calls := awaitingDecision(rec.Tail)
	switch {
	case len(calls) == 1:
		c := calls[0].ID
		return awaitingCalls(calls), fmt.Sprintf("decide with `cairn approve %s %s` or `cairn deny %s %s --reason TEXT`, then `cairn resume %s`",
			id, c, id, c, id)
	case len(calls) > 1:
		return awaitingCalls(calls), fmt.Sprintf("decide each with `cairn approve %s CALL` or `cairn deny %s CALL --reason TEXT`, then `cairn resume %s`",
			id, id, id)
	case rec.State.Status == checkpoint.StatusApproval && rec.State.Reason != "":
		return "awaiting approval", rec.State.Reason
	case rec.State.Status == checkpoint.StatusApproval:
		return "awaiting approval", fmt.Sprintf("`cairn show %s` says what waits", id)
	}
	return "", ""
}

// clearPause drops a request no run obeyed (one made as the last run
// ended), so that it does not stop the run now starting. The caller
// holds the agent's lock.
func (e *Engine) clearPause(id string) error {
	if p, ok := e.store.(checkpoint.Pauser); ok {
		return p.ClearPause(id)
	}
	return nil
}

// pauseEvery is how often, at most, a run's loop looks for a pause
// request between rounds: a look is a stat, or a query on PostgreSQL, that
// rounds of a few hundred µs would otherwise each pay. A pause waits for a
// boundary anyway; this makes it wait at most 10 ms longer.
const pauseEvery = 10 * time.Millisecond

// pauseDue says whether the loop should look for a pause request at this
// boundary: at its first, and then once pauseEvery has passed.
func (r *run) pauseDue() bool {
	now := time.Now()
	if !r.pauseLooked.IsZero() && now.Sub(r.pauseLooked) < pauseEvery {
		return false
	}
	r.pauseLooked = now
	return true
}

// pauseRequested looks once for a pause request and, if there is one,
// clears it: the run obeys it by stopping. A store that cannot be asked
// is taken as no request, with a warning.
func (r *run) pauseRequested() bool {
	if r.pauser == nil {
		return false
	}
	return r.pauseAsked(r.agentID) || r.root != "" && r.pauseAsked(r.root)
}

// pauseAsked says whether a pause of agent id was asked for, and clears
// the request: a sub-agent's run stops for its top-level agent's request,
// and so stops the tree.
func (r *run) pauseAsked(id string) bool {
	asked, err := r.pauser.PauseRequested(id)
	if err == nil && asked {
		err = r.pauser.ClearPause(id)
	}
	if err != nil {
		r.emit(Event{Type: EventWarning, Text: err.Error()})
	}
	return asked
}
