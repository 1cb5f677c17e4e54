package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The compile cache tests below run cairn as a process of its own, on a
// cache of their own that cairn tools warm filled with the built-in tools
// (a module of about 100 KB, compiled in a fraction of a second), beside
// files planted with known ages.

// cacheProcess runs cairn as a process with env added to its environment.
func cacheProcess(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// warmCache fills a new compile cache with the built-in tools and
// returns it, with the directory wazero keeps them in.
func warmCache(t *testing.T, dir string) string {
	t.Helper()
	if code, _, errOut := cacheProcess(t, nil, "tools", "warm", "--cache", dir); code != exitDone {
		t.Fatalf("tools warm: exit %d %s", code, errOut)
	}
	versions, err := filepath.Glob(filepath.Join(dir, "wazero-*"))
	if err != nil || len(versions) != 1 {
		t.Fatalf("the warmed cache holds %q, want one wazero directory: %v", versions, err)
	}
	return versions[0]
}

// plant writes a file of size bytes at p, its times age ago.
func plant(t *testing.T, p string, size int, age time.Duration) string {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o700))
	must(t, os.WriteFile(p, make([]byte, size), 0o600))
	aged(t, p, age)
	return p
}

// aged sets the times of p, not following a link, to age ago.
func aged(t *testing.T, p string, age time.Duration) {
	t.Helper()
	tv := unix.NsecToTimeval(time.Now().Add(-age).UnixNano())
	must(t, unix.Lutimes(p, []unix.Timeval{tv, tv}))
}

func present(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func hexName(c string) string { return strings.Repeat(c, 64) }

// Regression: nothing reclaimed the compile cache, which kept every
// module ever compiled and every older wazero version's directory.
// cairn tools gc removes what processes left behind, the directory of
// another version unused for a week, and past --cache-max the compiled
// modules used least recently; never one used in the last ten minutes,
// nor what a link in the cache points to.
func TestToolsGCReclaimsTheCompileCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	current := warmCache(t, dir)
	builtin, err := filepath.Glob(filepath.Join(current, "*"))
	if err != nil || len(builtin) != 1 {
		t.Fatalf("the warmed cache holds %q", builtin)
	}
	outside := plant(t, filepath.Join(t.TempDir(), "keep"), 1000, 30*24*time.Hour)
	old := plant(t, filepath.Join(current, hexName("1")), 1<<20, 3*time.Hour)
	recent := plant(t, filepath.Join(current, hexName("2")), 1<<20, time.Minute)
	stale := filepath.Join(dir, "wazero-v0.0.1-amd64-linux")
	plant(t, filepath.Join(stale, hexName("3")), 1<<20, 8*24*time.Hour)
	aged(t, stale, 8*24*time.Hour)
	renew := filepath.Join(dir, "cairn-renew-1")
	plant(t, filepath.Join(renew, "x"), 100, 2*time.Hour)
	aged(t, renew, 2*time.Hour)
	link := filepath.Join(current, hexName("4"))
	must(t, os.Symlink(outside, link))

	code, out, errOut := cacheProcess(t, nil, "tools", "gc", "--cache", dir, "--cache-max", "1MiB", "--dry-run", "--json")
	var got struct {
		Files []string `json:"files"`
		Bytes int64    `json:"bytes"`
		Kept  int64    `json:"kept_bytes"`
	}
	if code != exitDone || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("tools gc --dry-run --json: exit %d\n%s%s", code, out, errOut)
	}
	if len(got.Files) != 4 || got.Bytes != 2<<20+100 || !present(old) || !present(stale) || !present(link) {
		t.Fatalf("tools gc --dry-run: %+v; want the link, the old file, the renew and the stale directory listed, none removed", got)
	}

	code, out, errOut = cacheProcess(t, nil, "tools", "gc", "--cache", dir, "--cache-max", "1MiB")
	if code != exitDone || !strings.Contains(out, "removed "+filepath.Base(current)+"/"+hexName("1")+"\n") ||
		!strings.Contains(out, "removed wazero-v0.0.1-amd64-linux/\n") || !strings.Contains(out, "removed 4 files, 2097252 bytes;") {
		t.Fatalf("tools gc: exit %d\n%s%s", code, out, errOut)
	}
	if present(old) || present(stale) || present(renew) || present(link) || !present(recent) || !present(builtin[0]) {
		t.Errorf("after tools gc: old %v, stale %v, renew %v, link %v, recent %v, built-in %v; want only the recent file and the built-in tools'",
			present(old), present(stale), present(renew), present(link), present(recent), present(builtin[0]))
	}
	if b, err := os.ReadFile(outside); err != nil || len(b) != 1000 {
		t.Errorf("the file the link pointed to: %d bytes, %v", len(b), err)
	}
}

// Regression: nothing bounded the compile cache of an unattended device.
// A compile that writes into a cache past CAIRN_CACHE_MAX removes the
// files used least recently; a value that is not a size is refused.
func TestCompileKeepsTheCacheUnderCairnCacheMax(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := filepath.Join(dir, "wazero-v0.0.1-x")
	old := plant(t, filepath.Join(v, hexName("1")), 1<<20, 3*time.Hour)
	newer := plant(t, filepath.Join(v, hexName("2")), 1<<20, 2*time.Hour)
	code, _, errOut := cacheProcess(t, []string{"CAIRN_CACHE_MAX=1536KiB"}, "tools", "warm", "--cache", dir)
	if code != exitDone || present(old) || !present(newer) {
		t.Fatalf("tools warm with CAIRN_CACHE_MAX=1536KiB: exit %d %s; old %v, newer %v: want the old file gone",
			code, errOut, present(old), present(newer))
	}
	code, _, errOut = cacheProcess(t, []string{"CAIRN_CACHE_MAX=big"}, "tools", "warm", "--cache", dir)
	if code != exitUsage || !strings.Contains(errOut, `CAIRN_CACHE_MAX "big": want a size such as 1GiB, or off`) {
		t.Fatalf("CAIRN_CACHE_MAX=big: exit %d %s", code, errOut)
	}
}

// A --cache that is a file is a mistyped command line, exit 2, and not
// taken for a cache the user may not change.
func TestToolsGCOfAFileSaysItIsNoDirectory(t *testing.T) {
	t.Parallel()
	file := plant(t, filepath.Join(t.TempDir(), "file"), 10, 0)
	code, out, errOut := cacheProcess(t, nil, "tools", "gc", "--cache", file)
	if code != exitUsage || !strings.Contains(errOut, "the compile cache "+file+" is not a directory: pass --cache DIR") ||
		strings.Contains(errOut, "owns it") || out != "" {
		t.Fatalf("tools gc --cache FILE: exit %d\n%s%s", code, out, errOut)
	}
}
