package sandbox

import (
	"testing"
	"time"
)

// Compiling apart is one at a time across the processes of a compile
// cache that cannot be written too (a device image's, not warmed), where
// each module the cache lacks is compiled apart, into each process's own
// directory. Two Runtimes stand for the two processes.
func TestProcessesSharingAReadOnlyCacheCompileApartOneAtATime(t *testing.T) {
	dir := t.TempDir()
	cacheRuntime(t, dir)
	readOnly(t, dir)
	a, b := cacheRuntime(t, dir), cacheRuntime(t, dir)
	release := a.lockApart(t.Context())
	got := make(chan struct{})
	go func() {
		b.lockApart(t.Context())()
		close(got)
	}()
	select {
	case <-got:
		t.Error("a second process compiled apart while the first did, in a read-only cache")
	case <-time.After(300 * time.Millisecond):
	}
	release()
	<-got
}
