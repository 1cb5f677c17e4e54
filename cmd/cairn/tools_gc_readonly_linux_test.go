package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A compile cache the user cannot write: cairn tools gc says so and what
// to do, and a run on it goes as on any other, saying nothing of it.
func TestToolsGCOfACacheThatCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m,mode=0700"); err != nil {
		t.Skipf("a read-only cache is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	current := warmCache(t, dir)
	old := plant(t, filepath.Join(current, hexName("1")), 1<<20, 3*time.Hour)
	must(t, syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))

	code, out, errOut := cacheProcess(t, nil, "tools", "gc", "--cache", dir, "--cache-max", "0")
	if code != exitFailed || !strings.Contains(errOut, "/"+hexName("1")+" from the compile cache: read-only file system") ||
		!strings.Contains(errOut, "cannot be changed here, and nothing after that was removed: run `cairn tools gc` as the user who owns it, where it is writable") {
		t.Fatalf("tools gc of a read-only cache: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cacheProcess(t, []string{"CAIRN_CACHE_MAX=1KiB"}, "run", "--store", t.TempDir(), "--cache", dir, "-f", crashAgent(t))
	if code != exitDone || strings.Contains(errOut, "cache") || !present(old) {
		t.Fatalf("a run on a read-only cache: exit %d, the old file there: %v\n%s%s", code, present(old), out, errOut)
	}
}
