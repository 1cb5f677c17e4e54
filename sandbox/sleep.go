package sandbox

import (
	"sync"
	"time"
)

// sleeper is the sleep (poll_oneoff's clock subscriptions) of an instance
// granted the real clock, and what tells its randomness that the call must
// stop (stoppingRandom). wazero's own sleeps in the host function, where
// no stop check runs, so a guest could sleep past its call's deadline for
// as long as it asked; this one wakes when the call must stop, and the
// guest's next stop check ends it. A spare is made with its own sleeper
// and given the call's stop when the call binds it.
type sleeper struct {
	mu   sync.Mutex
	stop <-chan struct{} // closed when the call must stop; nil before a call binds it
}

// sleep pauses for ns nanoseconds, or until the call must stop. A nil
// sleeper, of an instance made for no call, just sleeps.
func (s *sleeper) sleep(ns int64) {
	var stop <-chan struct{}
	if s != nil {
		s.mu.Lock()
		stop = s.stop
		s.mu.Unlock()
	}
	if ns <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	}
}

// stopped reports whether the call the sleeper is bound to must stop. A
// nil sleeper, or one no call has bound, never stops.
func (s *sleeper) stopped() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// bind gives the sleeper the channel that closes when its call must stop.
func (s *sleeper) bind(stop <-chan struct{}) {
	s.mu.Lock()
	s.stop = stop
	s.mu.Unlock()
}
