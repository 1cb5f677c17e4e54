package sandbox

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// filesUnder is every file under dir that is not a directory.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	must(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	return files
}

// Regression: under a small memory limit (auto) a module compiled apart
// into a compile cache that could not take its file (a full disk, a
// read-only cache) was then compiled again, cold, in the process that
// runs the agent, which had no file to load it from: past the limit
// compiling apart is for. It is compiled apart into a directory of the
// Runtime's own among the temporary files, and loaded from there; the
// file goes once loaded, the directory as the Runtime closes.
func TestModuleCompiledApartIntoACacheThatCannotTakeItsFileIsLoadedFromAFileOfItsOwn(t *testing.T) {
	for _, c := range []struct {
		name  string
		cache func(t *testing.T) string
		apart int32 // compiles apart: a read-only cache is not tried
	}{
		{"full", fullCache, 2},
		{"read-only", func(t *testing.T) string {
			dir := t.TempDir()
			cacheRuntime(t, dir) // makes wazero's directory
			readOnly(t, dir)
			return dir
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := c.cache(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			rt := cacheRuntime(t, dir)
			rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
			m := runStart(t, rt)
			if n := rt.ownLoads.Load(); n != 1 {
				t.Errorf("a cache that cannot take the module's file, under 128 MiB: %d loads of a file compiled apart, want 1 (it compiled the module in its own process)", n)
			}
			if n := rt.apartRuns.Load(); n != c.apart {
				t.Errorf("%d compiles apart, want %d", n, c.apart)
			}
			if files := filesUnder(t, tmp); len(files) != 0 {
				t.Errorf("the temporary directory holds %q once the module is loaded, want nothing", files)
			}
			runModule(t, m)
			must(t, rt.Close(t.Context()))
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("the temporary directory holds %v once the runtime is closed, want nothing", left)
			}
		})
	}
}

// Regression: a process that ended while it loaded a module from its own
// directory (kill -9, the OOM killer) left the directory, with the
// module's file in it, among the temporary files for good: on a device
// whose /tmp is in memory, memory held until it restarts. A process
// making its own directory removes those of processes that have ended,
// and leaves those of processes that run (each holds its own locked).
func TestOwnDirectoryOfAProcessThatEndedIsRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ended, running, other := filepath.Join(tmp, ownPrefix+"1"), filepath.Join(tmp, ownPrefix+"2"), filepath.Join(tmp, "other")
	for _, d := range []string{ended, running, other} {
		must(t, os.MkdirAll(filepath.Join(d, versionDir()), 0o700))
		must(t, os.WriteFile(filepath.Join(d, versionDir(), "compiled"), []byte("code"), 0o600))
	}
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{ended, running, other} {
		must(t, os.Chtimes(d, old, old))
	}
	f, err := os.Open(running)
	must(t, err)
	defer f.Close()
	must(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))

	dir := t.TempDir()
	cacheRuntime(t, dir)
	readOnly(t, dir)
	rt := cacheRuntime(t, dir)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	runStart(t, rt)
	if n := rt.ownLoads.Load(); n != 1 {
		t.Fatalf("%d loads from the runtime's own directory, want 1", n)
	}
	if exists(ended) {
		t.Error("the own directory of a process that ended is still there")
	}
	if !exists(running) || !exists(other) {
		t.Error("the own directory of a process that runs, or another directory, was removed")
	}
}

// A module neither the compile cache nor the temporary files can take
// the file of, under a small memory limit, is compiled in the process
// that runs the agent, as the last resort, and runs.
func TestModuleNeitherTheCacheNorTheTemporaryFilesCanTakeRuns(t *testing.T) {
	dir := fullCache(t)
	t.Setenv("TMPDIR", fullCache(t))
	rt := cacheRuntime(t, dir)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	m := runStart(t, rt)
	if n := rt.ownLoads.Load(); n != 0 {
		t.Errorf("%d loads from a file the temporary files could not take, want 0", n)
	}
	runModule(t, m)
}

// A damaged file in a read-only compile cache, which stops a call compiled
// in process, does not under a small memory limit: the module is compiled
// apart into the runtime's own directory, and loaded from there.
func TestDamagedEntryInAReadOnlyCacheUnderASmallMemoryLimitRuns(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	runStart(t, cacheRuntime(t, dir))
	entry, _ := cacheEntry(t, dir)
	rewrite(t, entry, func(b []byte) []byte { return b[:len(b)/2] })
	readOnly(t, dir)
	rt := cacheRuntime(t, dir)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	runStart(t, rt)
	if n := rt.ownLoads.Load(); n != 1 {
		t.Errorf("%d loads from the runtime's own directory, want 1", n)
	}
}
