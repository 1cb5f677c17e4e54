package host

import "sync"

// workspaceLocks holds a mutex for each workspace whose changes the runs
// of this process settle and apply. Runs that share a workspace (a parent
// and its sub-agents, a workflow's steps) check a round's changes against
// it and apply them under its mutex, so that no other run's changes land
// between the check and the apply: a change that loses the race is
// refused at the check, and the model told, where the apply failed and
// the run with it. Two applies at once to one path would also write the
// same temporary file.
//
// Agents of different processes that share a workspace are not ordered:
// what one applies under another's check makes the other's apply fail,
// and its resume settles the call again (changedUnder).
var workspaceLocks sync.Map // absolute path → *sync.Mutex

// holdWorkspace locks the run's workspace if any of results has changes
// to settle or apply, and returns what unlocks it.
func (r *run) holdWorkspace(results []callResult) (release func()) {
	for _, res := range results {
		if res.hasChanges() {
			return lockWorkspace(r.workspace)
		}
	}
	return func() {}
}

// lockWorkspace locks the workspace dir (an absolute path) and returns
// what unlocks it.
func lockWorkspace(dir string) (unlock func()) {
	m, ok := workspaceLocks.Load(dir)
	if !ok {
		m, _ = workspaceLocks.LoadOrStore(dir, new(sync.Mutex))
	}
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}
