package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// The causes with which a run ends a model request it stops waiting for.
var (
	errPauseAsked = errors.New("a pause was asked for")
	errTimeUp     = errors.New("the run's max_time passed")
)

// watchEvery is how often a run looks for a pause request while a model
// request is in flight: a request that hangs must not hold a pause, or
// the run's max_time, until the server gives up. A variable for tests.
var watchEvery = 200 * time.Millisecond

// modelContext is the context of one model request: ctx, ended when a
// pause is asked for and when the run's max_time, or its tree's, ends the
// request (see deadline), unless the model is a script, which answers from
// its file at once: there is nothing to end. A tree's max_time that starts
// to count while the request is in flight (another agent of the tree
// commits a round, see tree.timed) ends it too, looked for with a pause. A
// request that ends so has committed nothing, so the run stops at its
// boundary. Looking starts only once the request has taken watchEvery:
// most answer sooner. done ends the watch and must be called.
func (r *run) modelContext(ctx context.Context) (mctx context.Context, done func()) {
	return r.watched(ctx, !r.scripted, true)
}

// callsContext is the context of a round's tool calls: ctx, ended with
// errTimeUp when the run's max_time, or its tree's, ends them (see
// deadline, the calls counting as a request sent as they start), so that
// a guest that loops or a network request that hangs does not hold the
// run past it. A pause does not end them: it waits for the boundary. A
// session's calls (commitCancelled) have no max_time: a session keeps to
// no limit of time. done must be called.
func (r *run) callsContext(ctx context.Context) (cctx context.Context, done func()) {
	if r.commitCancelled || r.deadline(time.Now()).IsZero() {
		return ctx, func() {}
	}
	return r.watched(ctx, true, false)
}

// watched is ctx, ended with errTimeUp at the deadline when timed, and,
// looked for every watchEvery, with errPauseAsked when pause is set and a
// pause is asked for, and with errTimeUp when a tree's max_time has
// started to count and passed.
func (r *run) watched(ctx context.Context, timed, pause bool) (wctx context.Context, done func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	var timer *time.Timer
	if at := r.deadline(time.Now()); !at.IsZero() && timed {
		timer = time.AfterFunc(time.Until(at), func() { cancel(errTimeUp) })
	}
	var mu sync.Mutex
	stopped := false
	var look *time.Timer
	// Kept under mu, which a look takes before it looks again: one that
	// comes before the assignment waits for it.
	mu.Lock()
	defer mu.Unlock()
	look = time.AfterFunc(watchEvery, func() {
		if pause && r.pauser != nil && r.pauseWaiting() {
			cancel(errPauseAsked)
			return
		}
		if at := r.tree.earliest(r.started > 0); !at.IsZero() && !time.Now().Before(at) {
			cancel(errTimeUp)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			look.Reset(watchEvery)
		}
	})
	return wctx, func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		look.Stop()
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
	}
}

// deadline is when the run's max_time, or its tree's, ends a model request
// sent at sent; zero when none sets one. Once the run has committed a
// round (or, for a tree's, once the tree has: see tree.timed) it is the
// end of that max_time; before then, max_time after the request was sent.
// So a hung request is ended in every round, and a max_time shorter than
// starting takes still lets a run whose model answers within it commit
// the round limitReached lets it commit.
func (r *run) deadline(sent time.Time) time.Time {
	var at time.Time
	if l := time.Duration(r.af.Limits.MaxTime); l > 0 {
		at = r.startedAt.Add(l)
		if r.started == 0 {
			at = sent.Add(l)
		}
	}
	return sooner(at, r.tree.requestDeadline(r.started > 0, sent))
}

// sooner is the earlier of a and b, a zero time being none.
func sooner(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// pauseWaiting says whether a pause of the agent, or of its tree's top,
// is asked for, without clearing it: the loop clears it as it obeys.
func (r *run) pauseWaiting() bool {
	asked, err := r.pauser.PauseRequested(r.agentID)
	if err == nil && !asked && r.root != "" {
		asked, err = r.pauser.PauseRequested(r.root)
	}
	return err == nil && asked
}

// modelStopped is the stop of a model request that modelContext ended,
// nil when it did not end it.
func (r *run) modelStopped(mctx context.Context) error {
	switch context.Cause(mctx) {
	case errPauseAsked:
		r.pauseRequested() // clears the request the run obeys
		return &stopError{Status: StatusPaused, Reason: pausedOnRequest}
	case errTimeUp:
		// The limit that ended the request counts now, whether or not
		// the run (or its tree) has committed a round.
		return &stopError{Status: StatusPaused, Reason: r.timeUp("while the model answered")}
	}
	return nil
}

// timeUp is the reason of a run that max_time (its own, or its tree's)
// stopped in the midst of a round, doing what while says: the limit that
// ended it counts now, whether or not the run (or its tree) has committed
// a round.
func (r *run) timeUp(while string) string {
	if reason := r.limitReachedTimed(true); reason != "" {
		return reason
	}
	return "reached max_time " + while + "; resume with --max-time to allow more"
}

// stopInFlight ends the run whose calls, results, cctx ended with
// errTimeUp (see callsContext) as a stop ends it: each call it stopped,
// interrupted and journaled without a result, gets a stopError that says
// so, and the round stays open for resume to seal them. A call that
// finished meanwhile keeps its result; when every call finished, nothing
// is stopped and the round commits.
func (r *run) stopInFlight(ctx, cctx context.Context, results []callResult) {
	if ctx.Err() != nil || context.Cause(cctx) != errTimeUp {
		return
	}
	var names []string
	for _, res := range results {
		if res.interrupted && res.stop == nil {
			names = append(names, res.call.ID+" ("+res.call.Name+")")
		}
	}
	if len(names) == 0 {
		return
	}
	stop := &stopError{Status: StatusPaused, Reason: fmt.Sprintf("%s; it stopped the calls in flight, %s, which the resume seals",
		r.timeUp("while calls ran"), strings.Join(names, ", ")), Stopped: checkpoint.StoppedMaxTime}
	for i := range results {
		if results[i].interrupted && results[i].stop == nil {
			results[i].stop = stop
		}
	}
}
