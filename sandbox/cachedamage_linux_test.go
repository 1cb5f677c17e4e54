package sandbox

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fsImmutable is FS_IMMUTABLE_FL of linux/fs.h: nothing may change the
// file or directory, not even root.
const fsImmutable = 0x10

// readOnly makes the directories under dir, and dir, read-only until the
// test ends: by their mode, or for root, whom modes do not stop, by the
// immutable flag (where the file system has one).
func readOnly(t *testing.T, dir string) {
	t.Helper()
	var dirs []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	}))
	for _, d := range dirs {
		if os.Getuid() != 0 {
			must(t, os.Chmod(d, 0o500))
			t.Cleanup(func() { os.Chmod(d, 0o700) })
			continue
		}
		if err := setImmutable(d, true); err != nil {
			t.Skipf("root cannot make %s read-only: %v", d, err)
		}
		t.Cleanup(func() { setImmutable(d, false) })
	}
}

func setImmutable(dir string, on bool) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if on {
		flags |= fsImmutable
	} else {
		flags &^= fsImmutable
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
}

// A compile cache that cannot be written costs compiling, never a call:
// at a cold start (wazero fails a compile whose entry it cannot write),
// after Trim, and compiled apart.
func TestCallWithACacheThatCannotBeWritten(t *testing.T) {
	t.Run("cold", func(t *testing.T) {
		dir := t.TempDir()
		rt := cacheRuntime(t, dir)
		readOnly(t, dir)
		runStart(t, rt)
	})
	t.Run("after Trim", func(t *testing.T) {
		dir := t.TempDir()
		rt := cacheRuntime(t, dir)
		m := runStart(t, rt)
		rt.bg.Wait()
		rt.Trim()
		readOnly(t, dir)
		runModule(t, m)
	})
	t.Run("apart", func(t *testing.T) {
		dir := t.TempDir()
		rt := cacheRuntime(t, dir)
		rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
		readOnly(t, dir)
		runStart(t, rt)
	})
}

// A damaged entry in a cache that cannot be written is the one thing
// compiling again cannot get past: the call fails, saying so and what to
// do, and not that the module is invalid.
func TestDamagedEntryInACacheThatCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	rt := cacheRuntime(t, dir)
	m := runStart(t, rt)
	rt.bg.Wait()
	rt.Trim()
	entry, _ := cacheEntry(t, dir)
	rewrite(t, entry, func(b []byte) []byte { return b[:len(b)/2] })
	readOnly(t, dir)
	_, err := m.Run(context.Background(), Policy{}, nil, io.Discard, io.Discard)
	if err == nil || errors.Is(err, errInvalidModule) || !strings.Contains(err.Error(), "make the directory writable, or remove it") {
		t.Fatalf("run: %v; want the compile cache's error", err)
	}
}
