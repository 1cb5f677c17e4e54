package sandbox

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// A compile cache the user cannot write costs a run nothing: its calls
// run, what it holds stays, and TrimCache says why it removed nothing.
func TestCacheThatCannotBeWrittenCostsARunNothing(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m,mode=0700"); err != nil {
		t.Skipf("a read-only cache is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	first := boundedRuntime(t, dir, -1)
	compileWait(t, first, "start")
	old := plantCompiled(t, dir, versionDir()+"/"+strings.Repeat("1", 64), 1<<20, 3*time.Hour)
	must(t, syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))

	rt := boundedRuntime(t, dir, 1<<10)
	runModule(t, compileWait(t, rt, "start"))
	// Not in the cache, nor can it be written there.
	if _, err := rt.Compile(t.Context(), watBytes["loop"]); err != nil {
		t.Fatalf("compile a module into a cache that cannot be written: %v", err)
	}
	rt.bg.Wait()
	if !exists(old) {
		t.Fatal("a run on a cache that cannot be written removed a file from it")
	}
	got, err := TrimCache(dir, CacheTrim{Max: 0})
	if err == nil || !strings.Contains(err.Error(), "read-only file system") || len(got.Files) != 0 {
		t.Fatalf("TrimCache of a read-only cache: %v, removed %v; want an error saying it is read-only", err, got.Files)
	}
}
