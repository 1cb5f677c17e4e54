package checkpoint

import (
	"errors"
	"testing"
)

// Regression: Remove (what `cairn run --fresh` starts with) removed the
// commit mark first and the journals before the snapshots, so a crash in
// the middle of it could leave the newest snapshot with neither its
// journal nor the mark: the agent then loaded as that snapshot's round,
// older than its last committed one, and a resume ran committed rounds
// again over a workspace that had their changes. Stopped after each of its
// removals, what Remove leaves is refused as lost (or, once it is done, no
// agent at all), and never loads as an older round.
func TestRemoveStoppedMidwayNeverLoadsAnOlderRound(t *testing.T) {
	for stop := 0; ; stop++ {
		dir := t.TempDir()
		s, err := OpenFileStore(dir, WithCompactAfter(0))
		must(t, err)
		log := newAgent(t, s, "a1", 4)
		// Rounds 5 and 6 stay in the journal after the newest snapshot.
		log.(unlockOnClose).Log.(*journalLog).compactAfter = 1 << 40
		commitRound(t, log, 5)
		commitRound(t, log, 6)
		must(t, log.Close())
		snaps, err := listRounds(dir+"/agents/a1", "snap-", ".cbor")
		must(t, err)
		if len(snaps) < 2 || snaps[len(snaps)-1] != 4 {
			t.Fatalf("snapshots %v: the test needs two, the newest of round 4", snaps)
		}

		lock, err := s.Lock("a1", ThisProcess("fresh"))
		must(t, err)
		removed := 0
		err = s.removeAgent("a1", func() bool {
			removed++
			return removed > stop
		})
		lock.Unlock()
		if err != nil && !errors.Is(err, errStopped) {
			t.Fatalf("remove: %v", err)
		}
		done := err == nil

		s, err = OpenFileStore(dir)
		must(t, err)
		rec, err := s.Read("a1")
		switch {
		case err == nil && rec.State.Round != 6:
			t.Fatalf("stopped after %d removals, the agent loads as round %d; round 6 was committed", stop, rec.State.Round)
		case err != nil && !errors.Is(err, ErrLost) && !errors.Is(err, ErrNotFound):
			t.Fatalf("stopped after %d removals: %v; want it refused as lost", stop, err)
		}
		if done {
			if s.Exists("a1") {
				t.Fatal("the agent exists after Remove")
			}
			if stop < 5 {
				t.Fatalf("Remove finished after %d removals", stop)
			}
			return
		}
	}
}
