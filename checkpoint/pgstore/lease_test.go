package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/jackc/pgx/v5"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Two stores (two pools, as two nodes) race for one agent many times:
// each time exactly one wins, and the others are told who.
func TestRaceForLease(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	nodes := []*pgstore.Store{open(t, url), open(t, url), open(t, url)}
	for trial := 0; trial < 20; trial++ {
		var mu sync.Mutex
		var won []checkpoint.Lock
		var winner string
		var lost []*checkpoint.LockedError
		var wg sync.WaitGroup
		for i, s := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run := "node-" + string(rune('a'+i))
				l, err := s.Lock("a1", checkpoint.ThisProcess(run))
				mu.Lock()
				defer mu.Unlock()
				var le *checkpoint.LockedError
				switch {
				case err == nil:
					won, winner = append(won, l), run
				case errors.As(err, &le) && errors.Is(err, checkpoint.ErrLocked):
					lost = append(lost, le)
				default:
					t.Errorf("trial %d: %v", trial, err)
				}
			}()
		}
		wg.Wait()
		if len(won) != 1 || len(lost) != len(nodes)-1 {
			t.Fatalf("trial %d: %d won, %d lost", trial, len(won), len(lost))
		}
		for _, le := range lost {
			if le.Holder.Run != winner || !strings.Contains(le.Error(), winner) {
				t.Fatalf("trial %d: the loser was told %q, the winner is %s", trial, le.Error(), winner)
			}
		}
		must(t, won[0].Unlock())
	}
}

// A holder paused past its lease, whose agent another node took, cannot
// commit: its commit is refused whole, names the new holder, and the
// agent goes on from what the new holder committed.
func TestPausedHolderIsFenced(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	nodeA := open(t, url, pgstore.WithLeaseTTL(300*time.Millisecond))
	nodeB := open(t, url)
	lockA, err := nodeA.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	logA, err := nodeA.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, logA, 1)
	must(t, logA.Append(roundRecords(2)[:1]...))
	must(t, logA.Sync())

	pgstore.Pause(lockA)
	waitExpired(t, url, "a1")
	lockB, err := nodeB.Lock("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lockB.Unlock()
	rec, logB, err := nodeB.Open("a1")
	must(t, err)
	if rec.State.Round != 1 || len(rec.Tail) != 1 {
		t.Fatalf("B found round %d with %d records after it", rec.State.Round, len(rec.Tail))
	}
	must(t, logB.Append(checkpoint.Record{Type: checkpoint.RecAbort, Time: t0, Round: 2}))
	commitRound(t, logB, 2)

	// A wakes up and tries to finish its round 2: its first write is refused.
	err = logA.Append(roundRecords(2)[1:]...)
	var fe *pgstore.FencedError
	if !errors.As(err, &fe) || !errors.Is(err, checkpoint.ErrLocked) || !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("A's write after the take-over: %v, want a *FencedError", err)
	}
	if fe.Now.Run != "run-b" || fe.NowEpoch != fe.Epoch+1 || !strings.Contains(err.Error(), "run-b") {
		t.Fatalf("fenced error %+v: %v", fe, err)
	}
	if _, err := logA.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 2}); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("A's log after being fenced: %v", err)
	}
	commitRound(t, logB, 3)
	got, err := nodeB.Read("a1")
	must(t, err)
	if got.State.Round != 3 || got.State.ToolCalls != 3 || len(got.Tail) != 0 {
		t.Fatalf("round %d, %d calls, tail %d: A's writes leaked in", got.State.Round, got.State.ToolCalls, len(got.Tail))
	}
	sameState(t, got.State, logB.State())
}

// Steal takes a live lease; the holder's next write is fenced.
func TestStealFencesTheHolder(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	nodeA, nodeB := open(t, url), open(t, url)
	_, err := nodeA.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	logA, err := nodeA.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, logA, 1)
	lockB, err := nodeB.Steal("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lockB.Unlock()
	if err := logA.Append(roundRecords(2)...); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("append after steal: %v", err)
	}
	if rec, _ := nodeB.Read("a1"); rec.State.Round != 1 {
		t.Fatalf("round %d after the fenced commit", rec.State.Round)
	}
}

// A log whose lease was released writes nothing more.
func TestReleasedLeaseFencesItsLog(t *testing.T) {
	s := open(t, pgtest.Shared(t).NewDatabase(t))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, log, 1)
	must(t, lock.Unlock())
	if err := log.Append(roundRecords(2)...); !errors.Is(err, pgstore.ErrFenced) || !strings.Contains(err.Error(), "released") {
		t.Fatalf("append after unlock: %v", err)
	}
	if _, _, err := s.Open("a1"); !errors.Is(err, pgstore.ErrNoLease) {
		t.Fatalf("Open without the lease: %v", err)
	}
}

// Every write renews the lease: its expiry moves on.
func TestCommitRenewsTheLease(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	s := open(t, url, pgstore.WithLeaseTTL(time.Hour))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	pgstore.Pause(lock) // only writes renew it now
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	before := expires(t, url, "a1")
	commitRound(t, log, 1)
	if after := expires(t, url, "a1"); !after.After(before) {
		t.Fatalf("expiry %v did not move on from %v", after, before)
	}
}

// An agent created on one node resumes on another once the first is gone.
func TestResumeOnAnotherNode(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	nodeA := open(t, url)
	lockA, err := nodeA.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	logA, err := nodeA.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, logA, 1)
	commitRound(t, logA, 2)
	must(t, logA.Append(roundRecords(3)[:2]...))
	must(t, logA.Sync())
	want := logA.State()
	must(t, lockA.Unlock())
	nodeA.Close()

	nodeB := open(t, url)
	lockB, err := nodeB.Lock("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lockB.Unlock()
	rec, logB, err := nodeB.Open("a1")
	must(t, err)
	sameState(t, rec.State, want)
	if len(rec.Tail) != 2 || rec.Tail[1].Phase != checkpoint.PhaseExecuting {
		t.Fatalf("tail on node B: %+v", rec.Tail)
	}
	must(t, logB.Append(roundRecords(3)[2:]...))
	if _, err := logB.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 3}); err != nil {
		t.Fatal(err)
	}
	if rec, _ := nodeB.Read("a1"); rec.State.Round != 3 || rec.State.ToolCalls != 3 {
		t.Fatalf("round %d, %d calls on node B", rec.State.Round, rec.State.ToolCalls)
	}
}

// waitExpired waits for the database's clock to pass the agent's lease.
func waitExpired(t *testing.T, url, agent string) {
	t.Helper()
	for !expired(t, url, agent) {
		time.Sleep(20 * time.Millisecond)
	}
}

func expired(t *testing.T, url, agent string) bool {
	var ok bool
	query(t, url, `SELECT expires < now() FROM cairn_leases WHERE agent = $1`, []any{agent}, &ok)
	return ok
}

func expires(t *testing.T, url, agent string) time.Time {
	var at time.Time
	query(t, url, `SELECT expires FROM cairn_leases WHERE agent = $1`, []any{agent}, &at)
	return at
}

// query runs one query on a connection of its own and scans its one row.
func query(t testing.TB, url, sql string, args []any, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(ctx)
	must(t, conn.QueryRow(ctx, sql, args...).Scan(dest...))
}

// A lease that expired and that no one took is still its holder's: the
// epoch fences, not the clock, so a holder that stalled with no one
// waiting goes on, and renews its lease as it writes.
func TestExpiredLeaseNoOneTookStillCommits(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url, pgstore.WithLeaseTTL(200*time.Millisecond))
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	pgstore.Pause(lock)
	waitExpired(t, url, "a1")
	before := expires(t, url, "a1")
	commitRound(t, log, 1)
	if after := expires(t, url, "a1"); !after.After(before) {
		t.Fatalf("the commit did not renew the lease: expiry %v, was %v", after, before)
	}
	if rec, _ := s.Read("a1"); rec.State.Round != 1 {
		t.Fatalf("round %d", rec.State.Round)
	}
}

// Agents committing at once share transactions, and one of them fenced in
// a shared transaction fails alone: the others' rounds are committed,
// the fenced one's is not.
func TestGroupCommitFencesOnlyTheFenced(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	s := open(t, url)
	other := open(t, url)
	const agents = 8
	logs := make([]checkpoint.Log, agents)
	for i := range logs {
		id := fmt.Sprintf("g%d", i)
		lock, err := s.Lock(id, checkpoint.ThisProcess("run-1"))
		must(t, err)
		defer lock.Unlock()
		logs[i], err = s.Create(id, newState(id))
		must(t, err)
	}
	stolen, err := other.Steal("g3", checkpoint.Holder{Host: "node-b", PID: 1, Run: "run-b"})
	must(t, err)
	defer stolen.Unlock()
	errs := make([]error, agents)
	var wg sync.WaitGroup
	for i, log := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 1; round <= 20 && errs[i] == nil; round++ {
				errs[i] = log.Append(checkpoint.Record{Type: checkpoint.RecUser, Time: time.Now(), Round: round,
					Message: &conversation.Message{Role: conversation.RoleUser, Text: "hi"}})
				if errs[i] == nil {
					_, errs[i] = log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: time.Now(), Round: round})
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var fe *pgstore.FencedError
		if i == 3 != errors.As(err, &fe) {
			t.Fatalf("agent g%d: %v", i, err)
		}
		rec, rerr := other.Read(fmt.Sprintf("g%d", i))
		must(t, rerr)
		if want := map[bool]int{true: 0, false: 20}[i == 3]; rec.State.Round != want {
			t.Fatalf("agent g%d at round %d, want %d", i, rec.State.Round, want)
		}
	}
}
