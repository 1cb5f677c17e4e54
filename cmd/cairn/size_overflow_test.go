package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A size past what an int64 holds wrapped around: 17179869184GiB was 0,
// so --cache-max removed every compiled module not used in ten minutes,
// and CAIRN_CACHE_MAX bounded the cache to a byte. Such a size is refused,
// naming it and the largest allowed, and nothing is removed.
func TestSizeOverflowIsRefused(t *testing.T) {
	cache := t.TempDir()
	old := filepath.Join(cache, "wazero-test", "module")
	for _, c := range []struct{ size, largest string }{
		{"17179869184GiB", "8589934591GiB"},
		{"8589934592GiB", "8589934591GiB"},
		{"9007199254740992KiB", "9007199254740991KiB"},
		{"9223372036854775808", "9223372036854775807"},
	} {
		compiledAnHourAgo(t, old)
		code, out, errOut := cairn(t, "tools", "gc", "--cache", cache, "--cache-max", c.size)
		if code != exitUsage || !strings.Contains(errOut, `--cache-max "`+c.size+`"`) || !strings.Contains(errOut, c.largest) {
			t.Errorf("--cache-max %s: exit %d, stdout %s, stderr %s", c.size, code, out, errOut)
		}
		if _, err := os.Stat(old); err != nil {
			t.Errorf("--cache-max %s: %v", c.size, err)
		}
		code, _, errOut = cairn(t, append([]string{"run", "--workspace-limit", "10," + c.size}, exampleAgent(t)...)...)
		if code != exitUsage || !strings.Contains(errOut, c.size) || !strings.Contains(errOut, c.largest) {
			t.Errorf("--workspace-limit 10,%s: exit %d, stderr %s", c.size, code, errOut)
		}
	}
	compiledAnHourAgo(t, old)
	if code, _, errOut := cairn(t, "tools", "gc", "--cache", cache, "--cache-max", "-17179869184GiB"); code != exitUsage {
		t.Errorf("--cache-max -17179869184GiB: exit %d, stderr %s", code, errOut)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("--cache-max -17179869184GiB: %v", err)
	}
	t.Setenv(cacheMaxEnv, "17179869184GiB")
	code, _, errOut := cairn(t, "tools", "warm", "--cache", cache)
	if code != exitUsage || !strings.Contains(errOut, `CAIRN_CACHE_MAX "17179869184GiB"`) || !strings.Contains(errOut, "8589934591GiB") {
		t.Errorf("CAIRN_CACHE_MAX=17179869184GiB: exit %d, stderr %s", code, errOut)
	}
}

// compiledAnHourAgo writes a file at path as a compiled module last used
// an hour ago.
func compiledAnHourAgo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("compiled"), 0o644); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
}
