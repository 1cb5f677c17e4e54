package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	fill(t, filepath.Join(dir, "filler"))
	return dir
}

// fill writes the file p until its file system is full.
func fill(t *testing.T, p string) {
	t.Helper()
	f, err := os.Create(p)
	must(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the cache's file system: %v", err)
			}
			return
		}
	}
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

// Regression: a module compiled apart into a full cache ran, but its
// mark said the cache held it compiled, though no file of it was
// written. Once the disk had room again, a runtime under 128 MiB took the
// module as cached, made no compile apart, and compiled it cold in its
// own process, past the memory limit compiling apart is for. A mark is
// written only for a module whose file is there: the module is compiled
// apart again, and then loaded from its file.
func TestModuleCompiledApartIntoAFullCacheIsCompiledApartOnceThereIsRoom(t *testing.T) {
	dir := fullCache(t)
	rt := cacheRuntime(t, dir)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	runStart(t, rt)
	// Into the cache, then into the runtime's own directory (see useOwn).
	if n := rt.apartRuns.Load(); n != 2 {
		t.Fatalf("a cold full cache under 128 MiB: %d compiles apart, want 2", n)
	}
	digest := digestOf(watBytes["start"])
	if rt.cached(digest) {
		t.Error("a module whose file could not be written is taken as cached")
	}
	must(t, os.Remove(filepath.Join(dir, "filler")))

	again := cacheRuntime(t, dir)
	again.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	m := runStart(t, again)
	if n := again.apartRuns.Load(); n != 1 {
		t.Errorf("the disk freed, a runtime under 128 MiB made %d compiles apart, want 1 (it compiled the module in its own process)", n)
	}
	if !again.cached(digest) || !exists(filepath.Join(dir, filepath.FromSlash(entryName(m.wasm, !m.stops)))) {
		t.Error("the module compiled apart with room on the disk is not marked as cached, or its file is not there")
	}
}

// Regression: on a full disk a module loaded in process was compiled
// twice before it ran: wazero failed the compile whose file it could not
// write, and the compile was done again, in full, to repair a file that
// was never damaged (renewEntry), though wazero kept the code the first
// compile made. A compile that failed only to write its file is taken as
// it is.
func TestCompileIntoAFullCacheCompilesOnce(t *testing.T) {
	rt := cacheRuntime(t, fullCache(t))
	runStart(t, rt)
	if n := rt.recompiles.Load(); n != 0 {
		t.Errorf("a module compiled into a full cache was compiled again %d times, want 0", n)
	}
}

// Regression: a cold compile cache on a read-only file system (a device
// image's, not warmed before it shipped) failed every start with "mkdir
// …: read-only file system", which said nothing of what to do. The error
// names the cache, and says to use one that can be written.
func TestColdCacheOnAReadOnlyFileSystemSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=1m,mode=0700"); err != nil {
		t.Skipf("a read-only cache is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	for _, cache := range []string{dir, filepath.Join(dir, "cache")} {
		_, err := NewRuntime(t.Context(), Config{CacheDir: cache})
		if err == nil || !strings.Contains(err.Error(), cache) || !strings.Contains(err.Error(), "read-only file system") ||
			!strings.Contains(err.Error(), "use a compile cache that can be written") {
			t.Errorf("a cold cache %s on a read-only file system: %v; want it named, the cause, and what to do", cache, err)
		}
	}
}

// A module whose file a full cache could not take is kept compiled in
// memory by Trim: letting go of it would have it compiled again, in
// process, at the next call, since there is no file to load it from.
func TestTrimKeepsCodeAFullCacheHasNoFileOf(t *testing.T) {
	for _, apart := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "apart"}[apart], func(t *testing.T) {
			rt := cacheRuntime(t, fullCache(t))
			if apart {
				rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
			}
			m := runStart(t, rt)
			rt.Trim()
			if k := rt.Kept(); k.Compiled == 0 {
				t.Errorf("Trim let go of a module the full cache holds no file of: %+v", k)
			}
			runModule(t, m)
		})
	}
}

// Regression: a module whose file was damaged while the disk then filled
// failed every call ("its entry there cannot be written again"): the
// repair could not write a fresh file, and the damaged one stayed in the
// way, though a full file system still lets a file be removed. The
// damaged file is removed, and the module runs, in process or under a
// small memory limit.
func TestDamagedEntryInAFullCacheRuns(t *testing.T) {
	for _, apart := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "apart"}[apart], func(t *testing.T) {
			dir := t.TempDir()
			if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
				t.Skipf("a full cache is a tmpfs mounted for the test, which needs root: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
			runStart(t, cacheRuntime(t, dir))
			entry, want := cacheEntry(t, dir)
			rewrite(t, entry, func(b []byte) []byte { return b[:len(b)/2] })
			fill(t, filepath.Join(dir, "filler"))
			rt := cacheRuntime(t, dir)
			if apart {
				rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
			}
			runStart(t, rt)
			// The file removed, the module's may fit in its room again.
			if b, err := os.ReadFile(entry); err == nil && !bytes.Equal(b, want) {
				t.Error("the damaged file is still in the cache")
			}
		})
	}
}
