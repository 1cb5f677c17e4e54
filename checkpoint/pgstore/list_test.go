package pgstore_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// A Store listing the agents again reads again only an agent whose rows
// changed: each commit, compaction, a run's end, a row damaged in place,
// the agent removed, is seen by the list right after it, and so is
// whether a process holds the agent's lease.
func TestListFollowsEveryChangeOfTheAgent(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "other", 1)
	lock, err := s.Lock("a", checkpoint.ThisProcess("run-a"))
	must(t, err)
	log, err := s.Create("a", newState("a"))
	must(t, err)
	list := func(want int, status checkpoint.Status, locked bool) checkpoint.Summary {
		t.Helper()
		l, err := s.List()
		must(t, err)
		if len(l) != 2 || l[0].ID != "a" || l[1].ID != "other" || l[1].Round != 1 {
			t.Fatalf("list: %+v", l)
		}
		if a := l[0]; a.Err != nil || a.Round != want || a.Status != status || a.Locked != locked {
			t.Fatalf("agent a listed: round %d, status %s, locked %v, err %v; want round %d, %s, locked %v",
				a.Round, a.Status, a.Locked, a.Err, want, status, locked)
		}
		return l[0]
	}
	list(0, checkpoint.StatusIdle, true)
	for round := 1; round <= 40; round++ { // compactions among them
		commitRound(t, log, round)
		list(round, checkpoint.StatusIdle, true)
	}
	must(t, log.Append(checkpoint.Record{Type: checkpoint.RecRunEnded, Time: t0,
		Run: &checkpoint.RunInfo{ID: "run-a", Status: checkpoint.StatusDone}}))
	must(t, log.Sync())
	list(40, checkpoint.StatusDone, true)
	must(t, log.Close())
	must(t, lock.Unlock())
	list(40, checkpoint.StatusDone, false)

	execSQL(t, url, `UPDATE cairn_agents SET snapshot = '\xff00ff'::bytea WHERE id = 'a'`)
	l, err := s.List()
	must(t, err)
	if len(l) != 2 || l[0].Err == nil || !strings.Contains(l[0].Err.Error(), "cairn_agents") {
		t.Fatalf("list after a.snapshot was damaged: %+v", l)
	}
	lock, err = s.Lock("a", checkpoint.ThisProcess("run-b"))
	must(t, err)
	must(t, s.Remove("a"))
	must(t, lock.Unlock())
	if l, err := s.List(); err != nil || len(l) != 1 || l[0].ID != "other" {
		t.Fatalf("list once a is removed: %+v, %v", l, err)
	}
}

// A second list of an unchanged agent of 500 rounds allocates less than
// a tenth of the first, which reads and decodes it.
func TestListReadsAnUnchangedAgentOnce(t *testing.T) {
	s := open(t, sharedURL(t))
	committedAgent(t, s, "big", 500)
	list := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		l, err := s.List()
		runtime.ReadMemStats(&after)
		if err != nil || len(l) != 1 || l[0].Round != 500 {
			t.Fatalf("list: %+v, %v", l, err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	first, again := list(), list()
	t.Logf("bytes allocated: the first list %d, the second %d", first, again)
	if again > first/10 {
		t.Fatalf("a second list of an unchanged agent allocated %d bytes, the first %d: it read the agent again", again, first)
	}
}

// BenchmarkList lists a database of 50 agents of 200 rounds each, as cairn
// serve does for the web view's list: "again" with the same Store, which
// keeps the summaries of agents whose rows did not change; "fresh" with a
// Store opened anew each time, which reads every agent, as a Store
// without the kept summaries did.
//
//	go test ./checkpoint/pgstore -run '^$' -bench 'List$' -benchtime 50x
func BenchmarkList(b *testing.B) {
	url := sharedURL(b)
	s := open(b, url)
	for i := range 50 {
		committedAgent(b, s, fmt.Sprintf("a%02d", i), 200)
	}
	list := func(b *testing.B, s *pgstore.Store) {
		if l, err := s.List(); err != nil || len(l) != 50 {
			b.Fatalf("list: %d agents, %v", len(l), err)
		}
	}
	b.Run("again", func(b *testing.B) {
		list(b, s)
		b.ResetTimer()
		for range b.N {
			list(b, s)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			fresh, err := pgstore.Open(context.Background(), url)
			must(b, err)
			b.StartTimer()
			list(b, fresh)
			b.StopTimer()
			fresh.Close()
			b.StartTimer()
		}
	})
}
