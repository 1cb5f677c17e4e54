package pgstore_test

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// deadPID is the pid of a process of this host that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	must(t, cmd.Run())
	return cmd.Process.Pid
}

// D3: a run killed with -9 on this host holds its agent no longer, for
// every question the store answers: Summary says it is not locked, so
// `cairn ls` and `show` say interrupted, not running, and `cairn pause`
// refuses it — as Lock, which takes it at once, always did. A live
// holder on this host, and one on another host, still run theirs.
func TestKilledHolderOnThisHostIsNotRunning(t *testing.T) {
	url := sharedURL(t)
	killed := open(t, url)
	host, _ := os.Hostname()
	for _, c := range []struct {
		agent   string
		holder  checkpoint.Holder
		running bool
	}{
		{"killed", checkpoint.Holder{Host: host, PID: deadPID(t), Run: "run-killed", Started: t0}, false},
		{"live", checkpoint.ThisProcess("run-live"), true},
		{"elsewhere", checkpoint.Holder{Host: host + "-other", PID: deadPID(t), Run: "run-far", Started: t0}, true},
	} {
		lock, err := killed.Lock(c.agent, c.holder)
		must(t, err)
		log, err := killed.Create(c.agent, newState(c.agent))
		must(t, err)
		commitRound(t, log, 1)
		must(t, log.Append(roundRecords(2)[:2]...)) // a round in flight
		pgstore.Pause(lock)                         // no renewals, as from a killed process

		s := open(t, url) // another process's view
		sum, err := s.Summary(c.agent)
		must(t, err)
		if sum.Locked != c.running || !sum.Interrupted {
			t.Errorf("%s: Summary says locked %v, interrupted %v; want locked %v", c.agent, sum.Locked, sum.Interrupted, c.running)
		}
		l, err := s.Lock(c.agent, checkpoint.ThisProcess("run-next"))
		if c.running != errors.Is(err, checkpoint.ErrLocked) {
			t.Errorf("%s: Lock by the next run: %v", c.agent, err)
		}
		if err == nil {
			must(t, l.Unlock())
		}
	}
}
