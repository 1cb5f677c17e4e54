package workflow

import (
	"context"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// outcome is how one step ended.
type outcome struct {
	step   Step
	done   *checkpoint.WorkflowStep // nil unless it completed
	status checkpoint.Status
	reason string
	stop   Stop // for a step that did not complete
}

// end is o with the step stopped with status for reason.
func (o outcome) end(status checkpoint.Status, reason string) outcome {
	o.status, o.reason = status, reason
	return o
}

// run dispatches every step whose needs have completed, up to the limit
// at once, journals each step as it completes, and stops dispatching at
// the first step that pauses or fails, or when ctx ends; the steps that
// run then finish (or pause) before it returns.
func (r *runner) run(ctx context.Context) (*Result, error) {
	ctx, r.stop = context.WithCancelCause(ctx)
	defer r.stop(nil)
	for _, s := range r.flow.Steps {
		if _, ok := r.outputs[s.Name]; ok {
			r.skipped = append(r.skipped, s.Name)
			r.step(StepEvent{Type: "skip", Step: s.Name, Kind: s.Kind(), Agent: r.agentOf(s), Output: r.outputs[s.Name]})
		}
	}
	results := make(chan outcome)
	running := map[string]bool{}
	var stop *outcome
	var stopped []outcome // every step that stopped short, stop among them
	for {
		if stop == nil && ctx.Err() == nil {
			r.dispatch(ctx, running, results)
		}
		if len(running) == 0 {
			break
		}
		o := <-results
		delete(running, o.step.Name)
		if o.done != nil {
			if err := r.complete(o); err != nil {
				o = o.end(checkpoint.StatusFailed, err.Error())
			} else if r.pauseLeft(o.done.Agent) {
				o = o.end(checkpoint.StatusPaused, "done, and then paused on request: the workflow starts no step after it")
			} else {
				continue
			}
		}
		r.step(StepEvent{Type: string(o.status), Step: o.step.Name, Kind: o.step.Kind(), Agent: r.agentOf(o.step), Reason: o.reason})
		o.stop.Status, o.stop.Reason = o.status, o.reason
		stopped = append(stopped, o)
		if stop == nil || graver(o.status, stop.status) {
			stop = &stopped[len(stopped)-1]
		}
	}
	return r.finish(ctx, stop, stopped)
}

// pauseLeft says whether a pause asked of agent, a step's that ended
// done, is still in the store, and clears it: a run looks for a pause at
// most every few milliseconds, so a step that ends soon after `cairn
// pause` of the workflow asked it may end without a look, and the
// workflow, not the step, obeys it.
func (r *runner) pauseLeft(agent string) bool {
	p, ok := r.eng.Store().(checkpoint.Pauser)
	if !ok {
		return false
	}
	asked, err := p.PauseRequested(agent)
	if err != nil || !asked {
		return false
	}
	p.ClearPause(agent)
	return true
}

// graver reports whether a step that stopped with status a says more of
// what the workflow must wait for than one that stopped with b: a failure
// more than a decision awaited, a decision more than a pause. The
// workflow takes the gravest stop's status, whatever order its steps
// stopped in, so that steps stopping at once give one answer.
func graver(a, b checkpoint.Status) bool {
	rank := func(s checkpoint.Status) int {
		switch s {
		case checkpoint.StatusFailed:
			return 2
		case checkpoint.StatusApproval:
			return 1
		}
		return 0
	}
	return rank(a) > rank(b)
}

// stopReason is why the workflow stopped: each step that stopped short,
// stop's first, named with its reason.
func stopReason(stop *outcome, stopped []outcome) (string, []Stop) {
	reasons, stops := []string{"step " + stop.step.Name + ": " + stop.reason}, []Stop{stop.stop}
	for _, o := range stopped {
		if o.step.Name != stop.step.Name {
			reasons, stops = append(reasons, "step "+o.step.Name+": "+o.reason), append(stops, o.stop)
		}
	}
	return strings.Join(reasons, "; "), stops
}

// dispatch starts the steps that are ready, up to the limit.
func (r *runner) dispatch(ctx context.Context, running map[string]bool, results chan<- outcome) {
	for _, s := range r.flow.Steps {
		if len(running) >= r.limit() {
			return
		}
		if running[s.Name] || !r.ready(s) {
			continue
		}
		running[s.Name] = true
		job := r.prepare(s)
		if job.blocked(r.rec.ID) == "" { // else it fails at once, and nothing starts
			r.step(StepEvent{Type: "start", Step: s.Name, Kind: s.Kind(), Agent: job.agent, Resumed: job.resumed})
		}
		go func() { results <- r.runStep(ctx, job) }()
	}
}

// ready says whether a step has not completed and every step it needs has.
func (r *runner) ready(s Step) bool {
	if _, ok := r.outputs[s.Name]; ok {
		return false
	}
	for _, n := range s.Needs {
		if _, ok := r.outputs[n]; !ok {
			return false
		}
	}
	return true
}

func (r *runner) limit() int {
	switch {
	case r.opts.Parallel > 0:
		return r.opts.Parallel
	case r.flow.MaxParallel > 0:
		return r.flow.MaxParallel
	}
	return DefaultParallel
}

// complete journals a completed step: the whole record, durably, before
// any step that needs it starts.
func (r *runner) complete(o outcome) error {
	r.recMu.Lock()
	r.rec.Steps = append(r.rec.Steps, *o.done)
	r.rec.Updated = time.Now().UTC()
	err := r.put()
	if err != nil {
		r.rec.Steps = r.rec.Steps[:len(r.rec.Steps)-1]
	}
	r.recMu.Unlock()
	if err != nil {
		return err
	}
	r.outputs[o.step.Name] = o.done.Output
	r.ran = append(r.ran, o.step.Name)
	r.step(StepEvent{Type: "done", Step: o.step.Name, Kind: o.step.Kind(), Agent: o.done.Agent, Output: o.done.Output})
	return nil
}

// finish stores how the workflow ended, once no step runs. A run whose
// workflow another process took over stores nothing, and ends with the
// write that found it so.
func (r *runner) finish(ctx context.Context, stop *outcome, all []outcome) (*Result, error) {
	r.recMu.Lock()
	defer r.recMu.Unlock()
	if r.lost != nil {
		return nil, r.lost
	}
	var stopped *Stop
	var stops []Stop
	switch {
	case len(r.outputs) == len(r.flow.Steps):
		r.rec.Status, r.rec.Reason = checkpoint.StatusDone, ""
	case stop != nil:
		r.rec.Status = stop.status
		r.rec.Reason, stops = stopReason(stop, all)
		stopped = &stop.stop
	default: // ctx ended before a step stopped
		r.rec.Status, r.rec.Reason = checkpoint.StatusPaused, "stopped: "+context.Cause(ctx).Error()
	}
	r.rec.Updated = time.Now().UTC()
	if err := r.put(); err != nil {
		return nil, err
	}
	return &Result{ID: r.rec.ID, Status: r.rec.Status, Reason: r.rec.Reason, Stop: stopped, Stopped: stops, Ran: r.ran, Skipped: r.skipped, Record: r.rec}, nil
}

// step tells the caller of a step event.
func (r *runner) step(ev StepEvent) {
	if r.opts.OnStep == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts.OnStep(ev)
}
