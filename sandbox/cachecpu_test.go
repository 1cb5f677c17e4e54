package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a compile cache copied from a machine of another CPU (a
// device image warmed on the machine that built it) holds each module's
// mark and file; but wazero names a module's file for the CPU features
// its code may use, and finds none of this machine's. Under a small
// memory limit (auto) the mark said the cache held the module, so it was
// not compiled apart, and wazero compiled it cold in this process. A mark
// is of the machine it was written on: the module is compiled apart.
func TestCacheCopiedFromAnotherCPUUnderASmallMemoryLimitCompilesApart(t *testing.T) {
	dir := t.TempDir()
	runStart(t, cacheRuntime(t, dir))
	entry, want := cacheEntry(t, dir)
	digest := digestOf(watBytes["start"])
	// What the other machine wrote: its file, named for its features, and
	// its mark, naming that file.
	other := filepath.Join(filepath.Dir(entry), strings.Repeat("ab", 32))
	must(t, os.Rename(entry, other))
	must(t, os.RemoveAll(filepath.Join(dir, markDir)))
	mark := filepath.Join(dir, filepath.FromSlash(markNameOn(digest, cpuFeatures()^1<<40)))
	must(t, os.MkdirAll(filepath.Dir(mark), 0o700))
	must(t, os.WriteFile(mark, []byte(path.Join(versionDir(), filepath.Base(other))), 0o600))

	rt := cacheRuntime(t, dir)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	runStart(t, rt)
	if n := rt.apartRuns.Load(); n != 1 {
		t.Errorf("a cache of another CPU under 128 MiB: %d compiles apart, want 1 (it compiled the module in its own process)", n)
	}
	entryRewritten(t, entry, want)
}

// Regression: a cairn upgraded over a compile cache, with the same wazero
// version but rewriting modules otherwise (stop checks, tables), found
// each module's mark, which is keyed by the module as given, naming the
// file of the module as the earlier cairn rewrote it, still there. Under
// a small memory limit (auto) the module was taken as cached, and wazero,
// finding no file of the module as this cairn rewrites it, compiled it
// cold in this process. A mark naming another file than the module's is
// not believed there: the module is compiled apart.
func TestMarkOfAModuleAsAnEarlierCairnRewroteItUnderASmallMemoryLimitCompilesApart(t *testing.T) {
	dir := t.TempDir()
	runStart(t, cacheRuntime(t, dir))
	entry, want := cacheEntry(t, dir)
	digest := digestOf(watBytes["start"])
	earlier := filepath.Join(filepath.Dir(entry), strings.Repeat("cd", 32))
	must(t, os.Rename(entry, earlier))
	(&Runtime{cacheDir: dir}).markEntry(digest, path.Join(versionDir(), filepath.Base(earlier)))

	rt := cacheRuntime(t, dir)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	runStart(t, rt)
	if n := rt.apartRuns.Load(); n != 1 {
		t.Errorf("a mark naming the file of the module as an earlier cairn rewrote it, under 128 MiB: %d compiles apart, want 1 (it compiled the module in its own process)", n)
	}
	entryRewritten(t, entry, want)
}
