package host

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The causes with which a run ends a model request it stops waiting for.
var (
	errPauseAsked = errors.New("a pause was asked for")
	errTimeUp     = errors.New("the run's max_time passed")
)

// watchEvery is how often a run looks for a pause request while a model
// request is in flight: a request that hangs must not hold a pause, or
// the run's max_time, until the server gives up.
const watchEvery = 200 * time.Millisecond

// modelContext is the context of one model request: ctx, ended at the
// run's max_time (or its tree's) once a round is committed, as limitReached
// counts it (a tree's, looked for with a pause, once the tree has committed
// a round), and when a pause is asked for. A request that ends so has
// committed nothing, so the run stops at its boundary. Looking for a
// pause starts only once the request has taken watchEvery: most answer
// sooner. done ends the watch and must be called.
func (r *run) modelContext(ctx context.Context) (mctx context.Context, done func()) {
	mctx, cancel := context.WithCancelCause(ctx)
	var timer *time.Timer
	if at := r.deadline(); !at.IsZero() {
		timer = time.AfterFunc(time.Until(at), func() { cancel(errTimeUp) })
	}
	if r.pauser == nil {
		return mctx, func() {
			if timer != nil {
				timer.Stop()
			}
			cancel(nil)
		}
	}
	var mu sync.Mutex
	stopped := false
	var look *time.Timer
	look = time.AfterFunc(watchEvery, func() {
		if r.pauseWaiting() {
			cancel(errPauseAsked)
			return
		}
		// A tree's max_time counts for a run that has committed no round
		// once another agent of the tree has (see tree.timed): a request
		// that began before then is ended by it too.
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
	return mctx, func() {
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

// deadline is when the run's max_time (or its tree's) ends a model
// request; zero when none does: no max_time, or no round committed yet in
// this run (see limitReached; a tree's max_time counts the same for each
// of its agents).
func (r *run) deadline() time.Time {
	var at time.Time
	if l := r.af.Limits.MaxTime; l > 0 && r.started > 0 {
		at = r.startedAt.Add(time.Duration(l))
	}
	if tat := r.tree.earliest(r.started > 0); !tat.IsZero() && (at.IsZero() || tat.Before(at)) {
		at = tat
	}
	return at
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
		reason := r.limitReached()
		if reason == "" {
			reason = "reached max_time while the model answered; resume with --max-time to allow more"
		}
		return &stopError{Status: StatusPaused, Reason: reason}
	}
	return nil
}
