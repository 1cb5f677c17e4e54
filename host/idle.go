package host

import (
	"sync"
	"time"
)

// idleAfter is how long a run waits for a person before the process lets
// go of what it keeps only for speed: long enough that a decision made at
// once (a policy, a person at the screen) costs nothing, short enough that
// an agent left at a prompt soon holds little more than its state.
var idleAfter = time.Second

// idle is called as the run starts to wait for a person, and returns the
// function to call when the wait is over. Once the wait has lasted
// idleAfter, the process lets go of its spare instances, snapshots and
// compiled code (sandbox.Runtime.TrimIdle), unless a call of this or
// another agent ran in that time or runs now: other agents of the process
// go on at full speed. It tries again every idleAfter while the wait
// lasts, so that work that ended just after the wait began (the last
// call's next instance, made in the background), agents that have since
// gone quiet, or a module that finished loading after a trim do not keep
// the process from letting go (a try with nothing to let go of costs
// nothing). The first call after a trim loads its module again.
func (r *run) idle() (done func()) {
	if r.trimIdle == nil {
		return func() {}
	}
	var mu sync.Mutex // guards t and over
	over := false
	var t *time.Timer
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(idleAfter, func() {
		r.trimIdle(idleAfter)
		mu.Lock()
		defer mu.Unlock()
		if !over {
			t.Reset(idleAfter)
		}
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		over = true
		t.Stop()
	}
}

// Idle lets go, in the background, of what the engine keeps only to make
// later calls quicker (see sandbox.Runtime.Trim), for a caller about to
// wait for a person between runs: a chat waiting for its next prompt.
// The next run's first call of each tool loads it again.
func (e *Engine) Idle() { go e.rt.Trim() }
