package sandbox

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// A process holds the compile cache's directory locked (flock) while it
// compiles a module apart: the processes sharing a cache (agents started
// at once on a device) compile apart one at a time, as one process does,
// and one that waited loads a module the other compiled instead of
// compiling it too. The directory itself is locked, not a file in it, so
// that a cache that cannot be written (where each module the cache lacks
// is compiled apart into a process's own directory, see useOwn) is locked
// too. The lock goes with the process that held it, however it ended.

// lockWait is how often lockApart tries again for a lock another process
// holds.
const lockWait = 20 * time.Millisecond

// lockApart waits for the compile cache's apart lock, and returns what
// releases it. It waits no longer than the compile's time limit, nor past
// ctx's end: a process stopped while it held the lock (SIGSTOP) costs the
// others the wait, and then they compile beside it. A cache directory
// that cannot be opened is not locked.
func (r *Runtime) lockApart(ctx context.Context) func() {
	f, err := os.OpenFile(r.cacheDir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return func() {}
	}
	ctx, cancel := r.limits.compileContext(ctx)
	defer cancel()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() } // closing it releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return func() {}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return func() {}
		case <-time.After(lockWait):
		}
	}
}
