package checkpoint

import "fmt"

// A new agent is made durable in the background (FileStore.Create,
// without group commit), so that its run's first model request does not
// wait for it. Its snapshot is written and fsynced before it is named, and
// its journal's header is written; then the syncs of the directories that
// name them (the agent's own, agents/, blobs/ and the store's) run while
// the run goes on, and the journal's header becomes durable with the
// first round's fdatasync. The agent's first durable point (Sync, Commit)
// and Close wait for them, and no commit mark is written before. A crash
// before then leaves, after a kill, the agent whole in the page cache; after
// a power cut, no agent (the snapshot's name was lost) or one at round 0
// whose journal is empty or gone: never a damaged one, since the snapshot
// is whole before it has a name, and nothing was durable yet.

// firstSyncs are a new agent's directory syncs, running in the background.
type firstSyncs struct {
	done chan struct{}
	err  error
}

// startFirstSyncs syncs dirs, in order, in the background.
func startFirstSyncs(dirs []string) *firstSyncs {
	s := &firstSyncs{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for _, d := range dirs {
			if err := syncDir(d); err != nil {
				s.err = fmt.Errorf("make the new agent durable: %w", err)
				return
			}
		}
	}()
	return s
}

// wait returns once the syncs have ended, with their error; nil for none.
func (s *firstSyncs) wait() error {
	if s == nil {
		return nil
	}
	<-s.done
	return s.err
}
