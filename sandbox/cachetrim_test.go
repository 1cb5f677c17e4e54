package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The compile cache on disk is bounded: the tests below fill a cache of
// their own with files of compiled code of known ages, compile real
// modules into it, and look at what is left.

// plantCompiled writes a file of size bytes under dir at name (slash
// separated), last used age ago, and returns its path.
func plantCompiled(t *testing.T, dir, name string, size int, age time.Duration) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	must(t, os.MkdirAll(filepath.Dir(p), 0o700))
	must(t, os.WriteFile(p, bytes.Repeat([]byte{0xaa}, size), 0o600))
	backdate(t, p, age)
	return p
}

// backdate sets the times of p, not following a link, to age ago.
func backdate(t *testing.T, p string, age time.Duration) {
	t.Helper()
	at := time.Now().Add(-age)
	tv := unix.NsecToTimeval(at.UnixNano())
	must(t, unix.Lutimes(p, []unix.Timeval{tv, tv}))
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// boundedRuntime is a Runtime on the compile cache in dir, bounded at max
// bytes.
func boundedRuntime(t *testing.T, dir string, max int64) *Runtime {
	t.Helper()
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{CacheDir: dir, CacheMax: max})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// compileWait compiles the wat module name in rt and waits for the work
// done after it (refreshing its file, keeping the bound).
func compileWait(t *testing.T, rt *Runtime, name string) *Module {
	t.Helper()
	m, err := rt.Compile(context.Background(), watBytes[name])
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	rt.bg.Wait()
	return m
}

// entryOf is the path of m's file in the compile cache in dir.
func entryOf(t *testing.T, dir string, m *Module) string {
	t.Helper()
	m.r.mu.Lock()
	e := m.entry
	m.r.mu.Unlock()
	if e == "" {
		t.Fatal("the module's file in the compile cache is not known")
	}
	return filepath.Join(dir, filepath.FromSlash(e))
}

// Regression: nothing bounded the compile cache, which kept every module
// ever compiled. A compile that writes a file into a cache past its bound
// removes the files used least recently, until it is under the bound.
func TestCacheOverItsBoundLosesItsLeastRecentlyUsedFiles(t *testing.T) {
	dir := t.TempDir()
	v := versionDir()
	oldest := plantCompiled(t, dir, v+"/"+strings.Repeat("1", 64), 1<<20, 3*time.Hour)
	older := plantCompiled(t, dir, v+"/"+strings.Repeat("2", 64), 1<<20, 2*time.Hour)
	old := plantCompiled(t, dir, v+"/"+strings.Repeat("3", 64), 1<<20, 90*time.Minute)
	rt := boundedRuntime(t, dir, 5<<19)
	m := compileWait(t, rt, "start")
	if exists(oldest) || !exists(older) || !exists(old) || !exists(entryOf(t, dir, m)) {
		t.Fatalf("after a compile into a cache past its bound: oldest %v, older %v, old %v, the new file %v; want only the oldest gone",
			exists(oldest), exists(older), exists(old), exists(entryOf(t, dir, m)))
	}
	runModule(t, m)
}

// A file this process loaded is kept however long ago it was used, and
// loading a file refreshes its time, atime being unreliable.
func TestCacheBoundKeepsWhatThisProcessLoaded(t *testing.T) {
	dir := t.TempDir()
	first := boundedRuntime(t, dir, 1<<30)
	start := entryOf(t, dir, compileWait(t, first, "start"))
	backdate(t, start, 5*time.Hour)

	rt := boundedRuntime(t, dir, 3<<19)
	m := compileWait(t, rt, "start")
	if fi, err := os.Stat(start); err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("loading a module from the compile cache left its file's time as it was: %v, %v", fi.ModTime(), err)
	}
	backdate(t, start, 5*time.Hour)
	v := versionDir()
	old := plantCompiled(t, dir, v+"/"+strings.Repeat("1", 64), 1<<20, 3*time.Hour)
	newer := plantCompiled(t, dir, v+"/"+strings.Repeat("2", 64), 1<<20, 2*time.Hour)
	compileWait(t, rt, "loop")
	if !exists(start) || exists(old) || !exists(newer) {
		t.Fatalf("loaded %v, old %v, newer %v: want the file this process loaded kept, the old one gone", exists(start), exists(old), exists(newer))
	}
	runModule(t, m)

	// Another process, which did not load it, removes it: the mark that
	// names it goes with it, so that no Runtime takes the cache to hold
	// the module.
	got, err := TrimCache(dir, CacheTrim{Max: 0})
	must(t, err)
	if exists(start) {
		t.Fatalf("TrimCache to 0 bytes kept %s: removed %v", start, got.Files)
	}
	if rt.cached(m.digest) {
		t.Error("the module's mark says the cache holds it after its file was removed")
	}
}

// A file removed from under a Runtime that let go of the module's code
// (Trim) costs its next call compiling again, never the call.
func TestCacheFileRemovedAfterTrimCostsACompile(t *testing.T) {
	dir := t.TempDir()
	rt := boundedRuntime(t, dir, -1)
	m := compileWait(t, rt, "start")
	runModule(t, m)
	rt.Trim()
	if k := rt.Kept(); k.Compiled != 0 {
		t.Fatalf("kept %+v after Trim, want no compiled module", k)
	}
	entry := entryOf(t, dir, m)
	backdate(t, entry, time.Hour)
	if _, err := TrimCache(dir, CacheTrim{Max: 0}); err != nil || exists(entry) {
		t.Fatalf("TrimCache: %v; the file is there: %v", err, exists(entry))
	}
	runModule(t, m)
	rt.bg.Wait()
	if !exists(entry) {
		t.Error("the module compiled again was not written into the cache")
	}
}

// The directory of another wazero version (another cairn's) goes once
// nothing in it was written or used for a week; one used since stays.
func TestCacheDropsAnotherVersionUnusedForAWeek(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "wazero-v0.0.1-"+strings.TrimPrefix(versionDir(), "wazero-"+wazeroVersion()+"-"))
	plantCompiled(t, stale, strings.Repeat("1", 64), 1000, 8*24*time.Hour)
	backdate(t, stale, 8*24*time.Hour)
	used := filepath.Join(dir, "wazero-v0.0.2-x")
	plantCompiled(t, used, strings.Repeat("1", 64), 1000, 8*24*time.Hour)
	plantCompiled(t, used, strings.Repeat("2", 64), 1000, 2*24*time.Hour)
	backdate(t, used, 8*24*time.Hour)
	got, err := TrimCache(dir, CacheTrim{Max: DefaultCacheMax})
	must(t, err)
	if exists(stale) || !exists(filepath.Join(used, strings.Repeat("1", 64))) {
		t.Fatalf("removed %v: want only %s", got.Files, stale)
	}
	if got.Bytes != 1000 || got.Kept != 2000 {
		t.Errorf("removed %d bytes, kept %d; want 1000 and 2000", got.Bytes, got.Kept)
	}
}

// Trimming never follows a symbolic link out of the cache: a link is
// removed as itself, whatever it points to.
func TestCacheTrimFollowsNoLink(t *testing.T) {
	outside := t.TempDir()
	plantCompiled(t, outside, "big", 3<<20, 30*24*time.Hour)
	plantCompiled(t, outside, "sub/"+strings.Repeat("4", 64), 1000, 30*24*time.Hour)
	before := tree(t, outside)

	dir := t.TempDir()
	v := versionDir()
	plantCompiled(t, dir, v+"/"+strings.Repeat("1", 64), 1000, 3*time.Hour)
	links := map[string]string{
		v + "/" + strings.Repeat("5", 64):            filepath.Join(outside, "big"),
		v + "/sub":                                   filepath.Join(outside, "sub"),
		"wazero-v0.0.1-linked":                       filepath.Join(outside, "sub"),
		renewPrefix + "1":                            outside,
		"cairn-source-1":                             filepath.Join(outside, "big"),
		"wazero-v0.0.2-x/in":                         filepath.Join(outside, "sub"),
		"wazero-v0.0.2-x/" + strings.Repeat("6", 64): filepath.Join(outside, "big"),
		markDir + "/1":                               filepath.Join(outside, "big"),
	}
	for name, target := range links {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.Symlink(target, p))
		backdate(t, p, 30*24*time.Hour)
	}
	backdate(t, filepath.Join(dir, "wazero-v0.0.2-x"), 30*24*time.Hour)

	got, err := TrimCache(dir, CacheTrim{Max: 0})
	must(t, err)
	sameTree(t, "outside the cache after TrimCache", tree(t, outside), before)
	for name := range links {
		if name != markDir+"/1" && exists(filepath.Join(dir, filepath.FromSlash(name))) {
			t.Errorf("the link %s was left in the cache", name)
		}
	}
	if got.Bytes != 1000 {
		t.Errorf("TrimCache counted %d bytes removed (%v); want the one file's 1000, no link's target", got.Bytes, got.Files)
	}
}

// A module whose code a process let go of (Trim) and whose file another
// process then removed is compiled again as its first compile was: apart,
// in a process of its own, under a small memory limit (auto), where
// compiling it in this process could take more memory than there is.
func TestCacheFileRemovedAfterTrimIsCompiledApartAgain(t *testing.T) {
	dir := t.TempDir()
	rt := boundedRuntime(t, dir, -1)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	m := compileWait(t, rt, "start")
	if n := rt.apartRuns.Load(); n != 1 {
		t.Fatalf("a cold cache under 128 MiB: %d compiles apart, want 1", n)
	}
	runModule(t, m)
	rt.Trim()
	entry := entryOf(t, dir, m)
	backdate(t, entry, time.Hour)
	if _, err := TrimCache(dir, CacheTrim{Max: 0}); err != nil || exists(entry) {
		t.Fatalf("TrimCache: %v; the file is there: %v", err, exists(entry))
	}
	runModule(t, m)
	if n := rt.apartRuns.Load(); n != 2 {
		t.Errorf("the module's file removed after Trim: %d compiles apart in all, want 2", n)
	}
}

// A file whose time is in the future (written while the clock was
// ahead, as on a device without a clock of its own before it synced) is
// not taken for one used in the last minutes for ever: it is trimmed as
// used long ago, and loading it sets its time to now.
func TestCacheFileFromTheFutureIsNotKeptForEver(t *testing.T) {
	dir := t.TempDir()
	v := versionDir()
	ahead := plantCompiled(t, dir, v+"/"+strings.Repeat("1", 64), 1<<20, -30*24*time.Hour)
	old := plantCompiled(t, dir, v+"/"+strings.Repeat("2", 64), 1<<20, 2*time.Hour)
	if _, err := TrimCache(dir, CacheTrim{Max: 3 << 19}); err != nil || exists(ahead) || !exists(old) {
		t.Fatalf("TrimCache: %v; the file from the future there: %v, the old one: %v; want only the old one", err, exists(ahead), exists(old))
	}

	first := boundedRuntime(t, dir, -1)
	start := entryOf(t, dir, compileWait(t, first, "start"))
	backdate(t, start, -30*24*time.Hour)
	compileWait(t, boundedRuntime(t, dir, -1), "start")
	if fi, err := os.Stat(start); err != nil || fi.ModTime().After(time.Now()) {
		t.Errorf("loading a module whose file's time is in the future left it there: %v, %v", fi.ModTime(), err)
	}
}

// Two processes on one cache (two Runtimes here, each knowing only what
// it loaded): one whose compile writes past the bound removes the file
// of a module the other loaded and let go of while it waited, and the
// other's next call of it compiles it again and runs.
func TestCacheBoundOfOneProcessCostsAnotherACompile(t *testing.T) {
	dir := t.TempDir()
	waiting := boundedRuntime(t, dir, -1)
	m := compileWait(t, waiting, "start")
	runModule(t, m)
	waiting.Trim()
	entry := entryOf(t, dir, m)
	backdate(t, entry, time.Hour)

	other := boundedRuntime(t, dir, 1)
	compileWait(t, other, "loop")
	if exists(entry) {
		t.Fatal("a compile past the bound kept the file another process loaded an hour ago")
	}
	runModule(t, m)
}

// Regression: the bound was kept only by a compile that wrote a file into
// the cache, so a cache past a bound lowered since (CAIRN_CACHE_MAX set
// on a device whose cache was full) stayed past it while every module
// was loaded from it. A process that only loads trims it as its Runtime
// closes: the files used least recently go, never one it loaded nor one
// used in the last ten minutes.
func TestCachePastALoweredBoundIsTrimmedByAProcessThatOnlyLoads(t *testing.T) {
	dir := t.TempDir()
	start := entryOf(t, dir, compileWait(t, boundedRuntime(t, dir, -1), "start"))
	backdate(t, start, 5*time.Hour)
	v := versionDir()
	oldest := plantCompiled(t, dir, v+"/"+strings.Repeat("1", 64), 1<<20, 4*time.Hour)
	old := plantCompiled(t, dir, v+"/"+strings.Repeat("2", 64), 1<<20, 3*time.Hour)
	recent := plantCompiled(t, dir, v+"/"+strings.Repeat("3", 64), 1<<20, 5*time.Minute)

	rt := boundedRuntime(t, dir, 3<<19)
	m := compileWait(t, rt, "start")
	runModule(t, m)
	must(t, rt.Close(context.Background()))
	if exists(oldest) || exists(old) || !exists(recent) || !exists(start) {
		t.Fatalf("after a load from a cache past its bound: oldest %v, old %v, used 5 minutes ago %v, the file loaded %v; want the oldest two gone",
			exists(oldest), exists(old), exists(recent), exists(start))
	}
}

// The trim of a process that only loads waits for every load: a module
// loaded at the same time as another is kept, not removed between the
// other's load and its own, which would cost compiling it again (a trim
// as soon as the loads under way had ended did so, one run in ten).
func TestCacheTrimAfterLoadsKeepsEveryModuleLoadedAtOnce(t *testing.T) {
	dir := t.TempDir()
	first := boundedRuntime(t, dir, -1)
	var files []string
	inodes := map[string]uint64{}
	for _, name := range []string{"start", "loop", "hash", "spin"} {
		f := entryOf(t, dir, compileWait(t, first, name))
		backdate(t, f, 5*time.Hour)
		files = append(files, f)
		var st unix.Stat_t
		must(t, unix.Lstat(f, &st))
		inodes[f] = st.Ino
	}

	rt := boundedRuntime(t, dir, 1)
	var loads []*Loading
	for _, name := range []string{"start", "loop", "hash", "spin"} {
		loads = append(loads, rt.Load(t.Context(), watBytes[name]))
	}
	for _, l := range loads {
		if _, err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	must(t, rt.Close(context.Background()))
	for _, f := range files {
		var st unix.Stat_t
		if err := unix.Lstat(f, &st); err != nil || st.Ino != inodes[f] {
			t.Errorf("%s, loaded with the others, was removed or written again: %v", f, err)
		}
	}
}
