package host

import (
	"os"
	"sync"
	"time"

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
// go. A process holds it for the moments from a check to an apply; one
// that holds it longer than flockPatience (stopped, or on a disk that
// hangs) is not waited for. Where dir cannot be opened, the file system
// has no flock or the wait runs out, it locks nothing: a change made
// under another's check is then refused by the apply, as it is without
// the lock.
func flockDir(dir string) (unlock func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	start := time.Now()
	for wait := time.Millisecond; ; wait = min(2*wait, 4*time.Millisecond) {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EWOULDBLOCK && err != unix.EINTR || time.Since(start) > flockPatience {
			break
		}
		time.Sleep(wait)
	}
	if err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the only descriptor lets the lock go
}

// flockPatience bounds the wait for another process's flock of a
// workspace.
const flockPatience = 10 * time.Second
