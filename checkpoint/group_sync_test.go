package checkpoint

import (
	"fmt"
	"testing"
)

// A Sync (a round's calls journaled as executing, before they run) goes
// through the group log as a Commit does: one fdatasync of the log makes
// the records every agent had appended durable, so the agents that sync
// after it find theirs durable and sync nothing; after a crash that loses
// every unsynced journal byte, each agent's interrupted round is there.
func TestGroupSyncServesEveryAgentWaiting(t *testing.T) {
	const agents = 8
	dir := t.TempDir()
	s := openGroupStore(t, dir)
	logs := make([]Log, agents)
	for i := range logs {
		logs[i] = newAgent(t, s, fmt.Sprintf("a%d", i), 1)
	}
	for _, log := range logs {
		must(t, log.Append(roundRecords(2)[:2]...)) // the turn and its call, executing
	}
	before := s.group.syncs.Load()
	for i, log := range logs {
		must(t, log.Sync())
		if n := s.group.syncs.Load() - before; n != 1 {
			t.Fatalf("after agent %d synced: %d fdatasyncs of the group log, want the first agent's one", i, n)
		}
	}
	crash(s)
	loseJournals(t, dir)
	r, err := OpenFileStore(dir)
	must(t, err)
	for i := range logs {
		rec, err := r.Read(fmt.Sprintf("a%d", i))
		must(t, err)
		checkRounds(t, fmt.Sprintf("a%d", i), rec.State, 1)
		if len(rec.Tail) != 2 || rec.Tail[1].Phase != PhaseExecuting {
			t.Fatalf("agent a%d: interrupted round %+v, want its turn and its call executing", i, rec.Tail)
		}
	}
}
