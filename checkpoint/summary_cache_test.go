package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A store summarising an agent again reads it again only when one of its
// files changed: every commit, a run's end, a compaction, damage, the
// agent removed. Each step is seen by the summary right after it, also
// with group commit, where the agent's newest records are in the group
// log, not in its directory.
func TestSummaryFollowsEveryChangeOfTheAgent(t *testing.T) {
	for name, opts := range map[string][]FileStoreOption{
		"journal": {WithCompactAfter(0)},
		"group":   {WithCompactAfter(0), WithGroupCommit()},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenFileStore(dir, opts...)
			must(t, err)
			defer s.Close()
			log := newAgent(t, s, "a", 1)
			summary := func(want int, wantStatus Status) Summary {
				t.Helper()
				sum, err := s.Summary("a")
				must(t, err)
				if sum.Err != nil || sum.Round != want || sum.Status != wantStatus || !sum.Locked {
					t.Fatalf("summary: round %d, status %s, locked %v, err %v; want round %d, %s, locked",
						sum.Round, sum.Status, sum.Locked, sum.Err, want, wantStatus)
				}
				return sum
			}
			summary(1, StatusRunning)
			summary(1, StatusRunning) // from the cache, still right
			for r := 2; r <= 6; r++ {
				commitRound(t, log, r) // commits, and compactions with WithCompactAfter(0)
				summary(r, StatusRunning)
			}
			must(t, log.Append(Record{Type: RecRunEnded, Time: t0, Run: &RunInfo{ID: "run-1", Status: StatusDone}}))
			must(t, log.Sync())
			summary(6, StatusDone)
			must(t, log.Close())
			if sum, err := s.Summary("a"); err != nil || sum.Locked || sum.Status != StatusDone {
				t.Fatalf("summary once unlocked: %+v, %v", sum, err)
			}
			snaps, err := filepath.Glob(filepath.Join(dir, "agents", "a", "snap-*.cbor"))
			must(t, err)
			if len(snaps) == 0 {
				t.Fatal("no snapshot")
			}
			must(t, os.WriteFile(snaps[len(snaps)-1], []byte("damaged"), 0o600))
			if sum, err := s.Summary("a"); err != nil || sum.Err == nil {
				t.Fatalf("summary of a damaged agent: %+v, %v; want its error", sum, err)
			}
			list, err := s.List()
			must(t, err)
			if len(list) != 1 || list[0].Err == nil {
				t.Fatalf("list with the damaged agent: %+v", list)
			}
			must(t, s.Remove("a"))
			if list, err := s.List(); err != nil || len(list) != 0 {
				t.Fatalf("list once the agent is removed: %+v, %v", list, err)
			}
		})
	}
}

// A store lists an agent whose files did not change without reading its
// state again: a second List of an agent of 500 rounds allocates less
// than a tenth of the first, which decodes it.
func TestListReadsAnUnchangedAgentOnce(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	must(t, err)
	defer s.Close()
	newAgent(t, s, "big", 500).Close()
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

// BenchmarkList lists a store of 50 agents of 200 rounds each, as cairn
// serve does for the web view's list: "again" with the same store, which
// keeps the summaries of agents whose files did not change; "fresh" with
// a store opened anew each time, which reads every agent, as a store
// without the kept summaries did.
//
//	go test ./checkpoint -run '^$' -bench 'List$' -benchtime 50x
func BenchmarkList(b *testing.B) {
	dir := b.TempDir()
	s, err := OpenFileStore(dir)
	must(b, err)
	for i := range 50 {
		newAgent(b, s, fmt.Sprintf("a%02d", i), 200).Close()
	}
	list := func(b *testing.B, s *FileStore) {
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
			fresh, err := OpenFileStore(dir)
			must(b, err)
			b.StartTimer()
			list(b, fresh)
			b.StopTimer()
			fresh.Close()
			b.StartTimer()
		}
	})
}
