package sandbox

import (
	"testing"
	"time"
)

// A key keeps as many spares as its calls ran at once, up to
// maxSparesPerKey, so that each call of a turn that asks for several at
// once finds one.
func TestSparesFollowCallsRunAtOnce(t *testing.T) {
	var ss spares
	newSpare := func() (*spare, error) { return &spare{}, nil }
	turn := func(calls int) (found int) {
		for range calls {
			if ss.take("k") != nil {
				found++
			}
		}
		for range calls {
			ss.done("k")
		}
		ss.refill("k", newSpare)
		return found
	}

	ss.refill("k", newSpare)
	if n := ss.count("k"); n != 1 {
		t.Fatalf("%d spares before any call, want 1", n)
	}
	if found := turn(3); found != 1 {
		t.Fatalf("the first turn of 3 calls found %d spares, want 1", found)
	}
	if found := turn(3); found != 3 {
		t.Fatalf("the next turn of 3 calls found %d spares, want 3", found)
	}
	if found := turn(1); found != 1 || ss.count("k") != 3 {
		t.Fatalf("a turn of 1 call found %d spares and left %d; want 1, and 3 kept", found, ss.count("k"))
	}
	turn(maxSparesPerKey + 2)
	if n := ss.count("k"); n != maxSparesPerKey {
		t.Fatalf("%d spares after a turn of %d calls, want %d", n, maxSparesPerKey+2, maxSparesPerKey)
	}
	if len(ss.order) != maxSparesPerKey {
		t.Errorf("%d spares in order, want %d", len(ss.order), maxSparesPerKey)
	}
}

// No spare of a key is made while a call of it runs: the call refills once
// it has run, and may reuse the memory it ran in.
func TestSparesAreNotMadeWhileACallRuns(t *testing.T) {
	var ss spares
	made := 0
	newSpare := func() (*spare, error) { made++; return &spare{}, nil }
	if ss.take("k") != nil {
		t.Fatal("a spare before any was made")
	}
	ss.refill("k", newSpare)
	if made != 0 {
		t.Fatal("a spare was made while a call of its key ran")
	}
	ss.refill("other", newSpare)
	if made != 1 {
		t.Fatalf("%d spares made for another key, want 1", made)
	}
	ss.done("k")
	ss.refill("k", newSpare)
	if made != 2 || ss.count("k") != 1 {
		t.Fatalf("after the call, %d spares made and %d kept; want 2 and 1", made, ss.count("k"))
	}
}

// Calls one after another keep one spare, and none counts as running once
// it has ended.
func TestPreinitCallsOneAfterAnotherKeepOneSpare(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	for range 4 {
		probe(t, m, p, `{}`)
		m.r.bg.Wait()
	}
	ss := &snapshotOf(t, m, p).spares
	key := spareKeyOf(p)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if n, running := len(ss.ready[key]), ss.active[key]; n != 1 || running != 0 {
		t.Errorf("%d spares and %d calls running, want 1 and 0", n, running)
	}
}

// count returns how many spares are ready for key.
func (ss *spares) count(key string) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.ready[key])
}

// A call that finds no spare ready while one of its key is being made
// waits for it and takes it, rather than making a second instance; one
// that finds none ready and none being made does not wait.
func TestSpareBeingMadeIsWaitedFor(t *testing.T) {
	var ss spares
	making, release := make(chan struct{}), make(chan struct{})
	want := &spare{}
	go ss.refill("k", func() (*spare, error) {
		close(making)
		<-release
		return want, nil
	})
	<-making
	got := make(chan *spare)
	go func() { got <- ss.take("k") }()
	time.Sleep(20 * time.Millisecond) // the call waits, if it does, before the spare is made
	close(release)
	if s := <-got; s != want {
		t.Fatalf("the call took %v, not the spare being made for it", s)
	}
	ss.done("k")
	if s := ss.take("other"); s != nil {
		t.Fatal("a spare of another key")
	}
}
