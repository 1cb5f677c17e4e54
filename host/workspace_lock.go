package host

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// workspaceLocks holds a mutex for each workspace whose changes the runs
// of this process settle and apply. Runs that share a workspace (a parent
// and its sub-agents, a workflow's steps, agents of other processes run
// on the same directory) check a round's changes against it and apply
// them holding it, so that no other run's changes land between the check
// and the apply: a change that loses the race is refused at the check,
// and the model told, where the apply failed and the run with it. Two
// applies at once to one path would also write the same temporary file.
// The mutex orders the runs of this process, a flock of the directory
// (flockDir) those of different processes.
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
	unflock := flockDir(dir)
	return func() {
		unflock()
		mu.Unlock()
	}
}

// flockDir takes an exclusive flock of the directory dir, which orders
// this process against others that lock it too, and returns what lets it
// go. Where dir cannot be opened or the file system has no flock, it
// locks nothing: what the lock orders is then ordered as before it, by
// the apply refusing a change made under it.
func flockDir(dir string) (unlock func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the only descriptor lets the lock go
}
