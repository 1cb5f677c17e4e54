package sandbox

import "testing"

// ofVersion rewrites the header of wazero's file at p to name version v:
// "WAZEVO", the version's length, the version, then the rest as it was.
func ofVersion(t *testing.T, p, v string) {
	t.Helper()
	rewrite(t, p, func(b []byte) []byte {
		rest := b[7+int(b[6]):]
		out := append([]byte("WAZEVO"), byte(len(v)))
		out = append(out, v...)
		return append(out, rest...)
	})
}

// Regression: a module's file in the compile cache that wazero wrote as
// another version (its header names that version), which wazero removes
// and compiles the module again without a word, was compiled so in this
// process under a small memory limit (auto), past the limit compiling
// apart is for: the module's mark said the cache held it. Such a file is
// taken as a damaged one: written afresh by a compile apart, then loaded.
func TestFileOfAnotherWazeroVersionUnderASmallMemoryLimitIsReplacedApart(t *testing.T) {
	for _, v := range []string{"v1.9.0", "v1.11.0", "v1.120.0-pre", "dev", "v1.12.0"} {
		if v == wazeroName() {
			continue // this build's: a test binary's wazero is "dev"
		}
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			runStart(t, cacheRuntime(t, dir))
			entry, want := cacheEntry(t, dir)
			ofVersion(t, entry, v)
			rt := cacheRuntime(t, dir)
			rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
			runStart(t, rt)
			if a, n := rt.apartRuns.Load(), rt.recompiles.Load(); a != 1 || n != 0 {
				t.Errorf("a file of wazero %s under 128 MiB: %d compiles apart and %d in this process, want 1 and 0", v, a, n)
			}
			entryRewritten(t, entry, want)
		})
	}
}
