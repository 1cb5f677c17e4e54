package pgstore_test

import (
	"errors"
	"os"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: a lease held by a process on another machine that has the
// same host name as this one (containers given one --hostname, images
// cloned with theirs) was taken as held by a process of this host, and
// since no process of this host had its pid, as held by one killed: a
// run here took the agent from its live holder, which was fenced and
// stopped, and `cairn ls` said the agent was interrupted. A holder's pid
// is judged only where it names the same process: the same kernel boot
// and PID namespace.
func TestSameHostNameOnAnotherMachineStillHolds(t *testing.T) {
	url := sharedURL(t)
	far := open(t, url)
	pgstore.SetSpace(far, "another machine's boot and PID namespace")
	host, _ := os.Hostname()
	lock, err := far.Lock("a1", checkpoint.Holder{Host: host, PID: deadPID(t), Run: "run-far", Started: t0})
	must(t, err)
	defer lock.Unlock()
	log, err := far.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)

	s := open(t, url)
	sum, err := s.Summary("a1")
	must(t, err)
	if !sum.Locked {
		t.Errorf("Summary says an agent whose holder on another machine lives is not locked")
	}
	if l, err := s.Lock("a1", checkpoint.ThisProcess("run-here")); !errors.Is(err, checkpoint.ErrLocked) {
		if err == nil {
			l.Unlock()
		}
		t.Fatalf("Lock of an agent whose holder on another machine lives: %v, want it refused as locked", err)
	}
	commitRound(t, log, 2)
}
