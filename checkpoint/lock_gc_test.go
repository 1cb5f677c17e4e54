package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// gc locks every directory under agents/, one a fork or a first run has
// just made for a new agent too, before that agent's maker locks it; the
// maker then waits for gc's glance at a directory with no agent in it,
// where it failed as if a process ran the agent. An agent with state
// that gc holds, and a new one another maker holds, are refused at once
// as before.
func TestLockOfANewAgentWaitsForGCThatLooksAtItsDirectory(t *testing.T) {
	dir := t.TempDir()
	gc, err := OpenFileStore(dir)
	must(t, err)
	maker, err := OpenFileStore(dir)
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(dir, "agents", "new"), 0o700)) // made by the maker, not locked yet
	held, err := gc.Lock("new", ThisProcess("gc"))
	must(t, err)
	go func() {
		time.Sleep(200 * time.Millisecond)
		held.Unlock()
	}()
	start := time.Now()
	l, err := maker.Lock("new", ThisProcess("fork"))
	if err != nil {
		t.Fatalf("lock of a new agent gc looked at: %v", err)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("took the lock gc held")
	}
	must(t, l.Unlock())

	// Another maker's hold of a new agent is refused at once.
	other, err := gc.Lock("new", ThisProcess("fork"))
	must(t, err)
	start = time.Now()
	if _, err := maker.Lock("new", ThisProcess("fork")); !errors.Is(err, ErrLocked) || time.Since(start) > time.Second {
		t.Fatalf("lock of a new agent another maker holds: %v after %v", err, time.Since(start))
	}
	must(t, other.Unlock())

	// gc's hold of an agent with state that outlasts lockSettle is
	// refused, naming gc and saying to try again.
	gcAgent(t, gc, "old", 1, Definition{Workspace: "/ws"})
	held, err = gc.Lock("old", ThisProcess("gc"))
	must(t, err)
	defer held.Unlock()
	start = time.Now()
	_, err = maker.Lock("old", ThisProcess("run"))
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.Run != "gc" || time.Since(start) < lockSettle {
		t.Fatalf("lock of an agent gc goes on collecting: %v after %v; want gc's lock, refused after %v", err, time.Since(start), lockSettle)
	}
}

// Regression: `cairn gc` (from cron, say) locks each agent for a moment;
// a fork of an agent, or a run or resume of one, that met gc's lock
// failed as locked (2 of 25 forks beside a loop of gc). It waits for gc,
// and for the other commands that hold an agent for a moment.
func TestLockWaitsForACommandThatHoldsTheAgentForAMoment(t *testing.T) {
	dir := t.TempDir()
	gc, err := OpenFileStore(dir)
	must(t, err)
	runner, err := OpenFileStore(dir)
	must(t, err)
	gcAgent(t, gc, "a", 1, Definition{Workspace: "/ws"})
	for _, holder := range []string{"gc", "snapshot", "undo", "decide", "workflow status"} {
		held, err := gc.Lock("a", ThisProcess(holder))
		must(t, err)
		go func() {
			time.Sleep(200 * time.Millisecond)
			held.Unlock()
		}()
		l, err := runner.Lock("a", ThisProcess("run-1"))
		if err != nil {
			t.Fatalf("lock of an agent %s held for a moment: %v", holder, err)
		}
		must(t, l.Unlock())
	}
	// A run's hold is not waited for.
	held, err := gc.Lock("a", ThisProcess("run-0"))
	must(t, err)
	defer held.Unlock()
	start := time.Now()
	if _, err := runner.Lock("a", ThisProcess("run-1")); !errors.Is(err, ErrLocked) || time.Since(start) > time.Second {
		t.Fatalf("lock of an agent a run holds: %v after %v; want refused at once", err, time.Since(start))
	}
}
