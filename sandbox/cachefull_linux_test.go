package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fullCache is a compile cache on a file system of its own (a tmpfs
// mounted for the test, which needs root) filled to the last byte: a
// directory can still be made there, a file written cannot.
func fullCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Skipf("a full cache is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	f, err := os.Create(filepath.Join(dir, "filler"))
	must(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the cache's file system: %v", err)
			}
			break
		}
	}
	return dir
}

// Regression: on a full disk, a compile whose file wazero could not write
// was done again in a directory of the cache's (a repair, renewEntry),
// which a full file system still lets one make; that compile failed to
// write too, and the module was refused as invalid, compiled in process
// or apart. A full cache costs a run nothing: the module runs.
func TestCompileIntoAFullCacheRuns(t *testing.T) {
	for _, apart := range []bool{false, true} {
		name := "in process"
		if apart {
			name = "apart"
		}
		t.Run(name, func(t *testing.T) {
			rt := cacheRuntime(t, fullCache(t))
			if apart {
				rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
			}
			runStart(t, rt)
		})
	}
}
