package host

import (
	"context"
	"testing"
	"time"
)

// Regression: the watch's timer looked again through the variable it was
// being assigned to, so a look that came before the assignment (watchEvery
// passing between the timer's start and the assignment, on a loaded
// machine) reset a nil timer and the process panicked. Under -race this
// fails every time without the fix; without -race, when the look wins.
func TestWatchLooksAgainOnlyOnceItsTimerIsKept(t *testing.T) {
	defer func(d time.Duration) { watchEvery = d }(watchEvery)
	watchEvery = time.Nanosecond
	r := &run{af: &AgentFile{}}
	for range 5000 {
		_, done := r.watched(context.Background(), false, false)
		done()
	}
}
