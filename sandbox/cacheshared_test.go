package sandbox

import (
	"context"
	"sync"
	"testing"
)

// Regression: two processes sharing a compile cache under a small memory
// limit (auto), say two agents started at once on a device, each compiled
// a module the cache lacked in a process of its own at the same time: two
// compiles' memory at once, past the limit compiling apart one module at
// a time is for, and the same work twice. Compiling apart is one at a
// time across the processes of a cache: the second waits, then loads the
// module the first compiled. Two Runtimes stand for the two processes.
func TestTwoProcessesSharingACacheCompileAModuleApartOnce(t *testing.T) {
	dir := t.TempDir()
	var rts [2]*Runtime
	for i := range rts {
		rts[i] = cacheRuntime(t, dir)
		rts[i].memoryLimit = func() (int64, bool) { return 128 << 20, true }
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, rt := range rts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := rt.Compile(context.Background(), guestBytes["escape"]); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := rts[0].apartRuns.Load() + rts[1].apartRuns.Load(); n != 1 {
		t.Errorf("two processes compiling the same module under 128 MiB: %d compiles apart, want 1", n)
	}
}
