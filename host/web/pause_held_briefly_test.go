package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: pause of an agent whose lock `cairn approve` held for a
// moment (its decision being journaled) answered 202 "pause requested",
// though no run held the agent and nothing would pause. A holder that
// runs no round is waited for briefly: once it lets go, the answer is
// what the agent is, 409, as for any agent no process runs; one that
// holds on is named as no run, 409, with nothing paused.
func TestPauseWhileApproveHoldsTheLockSaysNothingPaused(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")

	lock, err := f.store.Lock("ap", checkpoint.ThisProcess("decide"))
	must(t, err)
	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		lock.Unlock()
		close(released)
	}()
	var e apiError
	f.decode(f.post("/api/agents/ap/pause", struct{}{}), http.StatusConflict, &e)
	if !strings.Contains(e.Error, "nothing to pause") || !strings.Contains(e.Error, "`cairn approve ap call_1_0`") {
		t.Errorf("pause while a decision held the lock for a moment answered %q; want that nothing is paused, and how to decide", e.Error)
	}
	<-released

	lock, err = f.store.Lock("ap", checkpoint.ThisProcess("decide"))
	must(t, err)
	defer lock.Unlock()
	f.decode(f.post("/api/agents/ap/pause", struct{}{}), http.StatusConflict, &e)
	if !strings.Contains(e.Error, "nothing to pause") || !strings.Contains(e.Error, "runs no round") {
		t.Errorf("pause while another process held the lock for no run answered %q; want that nothing is paused, and why", e.Error)
	}
}
