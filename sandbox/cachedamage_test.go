package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnrun/cairn/abi"
)

// The compile cache is only a cache: whatever became of a module's entry
// on disk, a call of the module runs, and the entry is written again. The
// tests below compile testdata/wat/start.wasm (it exits with 7) into a
// cache of their own, damage wazero's file of it, and call again: in a new
// runtime, after Trim, and compiled in a process of its own.

// entryDamage is one thing that can become of a compile cache entry.
type entryDamage struct {
	name string
	do   func(t *testing.T, entry string)
}

var entryDamages = []entryDamage{
	{"truncated", func(t *testing.T, p string) { rewrite(t, p, func(b []byte) []byte { return b[:len(b)/2] }) }},
	{"emptied", func(t *testing.T, p string) { rewrite(t, p, func([]byte) []byte { return nil }) }},
	{"zero-filled", func(t *testing.T, p string) { rewrite(t, p, func(b []byte) []byte { return make([]byte, len(b)) }) }},
	{"a byte of its code flipped", func(t *testing.T, p string) {
		rewrite(t, p, func(b []byte) []byte { b[len(b)-16] ^= 0xff; return b })
	}},
	{"of another wazero version", func(t *testing.T, p string) {
		// "WAZEVO", the version's length, the version.
		rewrite(t, p, func(b []byte) []byte {
			for i := 7; i < 7+int(b[6]); i++ {
				b[i] = 'x'
			}
			return b
		})
	}},
	{"a directory", func(t *testing.T, p string) {
		must(t, os.Remove(p))
		must(t, os.MkdirAll(filepath.Join(p, "sub"), 0o700))
	}},
	{"a FIFO", func(t *testing.T, p string) {
		must(t, os.Remove(p))
		must(t, syscall.Mkfifo(p, 0o600))
	}},
	{"a link to a FIFO", func(t *testing.T, p string) {
		must(t, os.Remove(p))
		fifo := filepath.Join(t.TempDir(), "fifo")
		must(t, syscall.Mkfifo(fifo, 0o600))
		must(t, os.Symlink(fifo, p))
	}},
}

func rewrite(t *testing.T, p string, change func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	must(t, os.WriteFile(p, change(b), 0o600))
}

// cacheEntry is the one compiled module wazero keeps in the cache in dir,
// and its bytes.
func cacheEntry(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	must(t, err)
	var entries []string
	for _, p := range paths {
		if !strings.HasSuffix(p, ".tmp") {
			entries = append(entries, p)
		}
	}
	if len(entries) != 1 {
		t.Fatalf("the compile cache holds %q, want one compiled module", entries)
	}
	b, err := os.ReadFile(entries[0])
	must(t, err)
	return entries[0], b
}

// entryRewritten fails the test unless the entry at p is again what it was.
func entryRewritten(t *testing.T, p string, want []byte) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the damaged entry was not written again: %v, %v", fi, err)
	}
	if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, want) {
		t.Fatalf("the entry written again is not the module compiled (%d bytes, %v; want %d)", len(b), err, len(want))
	}
}

func cacheRuntime(t *testing.T, dir string) *Runtime {
	t.Helper()
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{CacheDir: dir})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// runStart compiles start.wasm in rt and runs it, failing the test
// unless it exits with 7, and waits for the work rt does after it (which
// refreshes the module's file and writes its mark, and would race with
// a test damaging them); the module is returned.
func runStart(t *testing.T, rt *Runtime) *Module {
	t.Helper()
	ctx := context.Background()
	m, err := rt.Compile(ctx, watBytes["start"])
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	runModule(t, m)
	rt.bg.Wait()
	return m
}

func runModule(t *testing.T, m *Module) {
	t.Helper()
	ex, err := m.Run(context.Background(), Policy{}, nil, io.Discard, io.Discard)
	if err != nil || ex.Code != 7 {
		t.Fatalf("run: exit %d, %v; want exit 7", ex.Code, err)
	}
}

// notWaitingOn runs fn, and fails the test if meanwhile something waits
// to read a FIFO at path: a writer's non-blocking open of a FIFO succeeds
// only while a reader has it open or waits in open (and releases it).
func notWaitingOn(t *testing.T, path string, fn func()) {
	t.Helper()
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-done:
				return
			default:
			}
			fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
			if err == nil {
				var st syscall.Stat_t
				fifo := syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO
				syscall.Close(fd)
				if fifo {
					t.Error("a compile waited to read a FIFO in the compile cache")
				}
			}
			runtime.Gosched()
		}
	}()
	defer func() {
		close(done)
		<-watched
	}()
	fn()
}

// Regression for a damaged entry failing a warm start: wazero fails the
// compile of a module whose entry it cannot read, and waits forever on
// one that is a FIFO.
func TestCallAtStartWithADamagedCacheEntry(t *testing.T) {
	for _, d := range entryDamages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			runStart(t, cacheRuntime(t, dir))
			entry, want := cacheEntry(t, dir)
			d.do(t, entry)
			notWaitingOn(t, entry, func() { runStart(t, cacheRuntime(t, dir)) })
			entryRewritten(t, entry, want)
		})
	}
}

// Regression for a damaged entry failing a call after Trim: a module's next call
// loads it from the compile cache, and a damaged entry failed that call.
func TestCallAfterTrimWithADamagedCacheEntry(t *testing.T) {
	for _, d := range entryDamages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			rt := cacheRuntime(t, dir)
			m := runStart(t, rt)
			rt.bg.Wait()
			rt.Trim()
			if k := rt.Kept(); k.Compiled != 0 {
				t.Fatalf("kept %+v after Trim, want no compiled module", k)
			}
			entry, want := cacheEntry(t, dir)
			d.do(t, entry)
			notWaitingOn(t, entry, func() { runModule(t, m) })
			entryRewritten(t, entry, want)
		})
	}
}

// Regression for a damaged entry of a module compiled apart (auto, under
// a small memory limit): the process compiling it met the entry, failed,
// and the module was called invalid. Here the marks are gone, as after a
// cache filled by an older cairn, so that the module is compiled apart.
func TestCompileApartWithADamagedCacheEntry(t *testing.T) {
	for _, d := range entryDamages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			runStart(t, cacheRuntime(t, dir))
			entry, want := cacheEntry(t, dir)
			d.do(t, entry)
			must(t, os.RemoveAll(filepath.Join(dir, markDir)))
			rt := cacheRuntime(t, dir)
			rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
			digest := digestOf(watBytes["start"])
			if !rt.apart(digest, func() string { return "" }) {
				t.Fatal("auto under 128 MiB without the module marked does not compile apart")
			}
			notWaitingOn(t, entry, func() { runStart(t, rt) })
			entryRewritten(t, entry, want)
			if !rt.cached(digest) {
				t.Error("the module compiled apart is not marked in the cache")
			}
		})
	}
}

// notWritingTo runs fn, and fails the test if meanwhile something opens
// the FIFO at path to write (which waits for a reader): a reader is kept
// open meanwhile, so that such an open goes on, and a writer that has
// come and gone leaves the reader a hang-up.
func notWritingTo(t *testing.T, path string, fn func()) {
	t.Helper()
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	must(t, err)
	defer syscall.Close(fd)
	fn()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if _, err := unix.Poll(fds, 0); err == nil && fds[0].Revents&unix.POLLHUP != 0 {
		t.Error("a compile opened a FIFO in the compile cache to write to it")
	}
}

// The directories and marks of the compile cache, replaced by something
// else, cost compiling again, never a start or a call: NewRuntime failed
// on a wazero directory that is not one, and a compile waited forever to
// mark a module whose mark (see markFile) is a FIFO.
func TestStartWithTheCacheDirectoriesAndMarksDamaged(t *testing.T) {
	fifo := func(t *testing.T, p string) {
		must(t, os.RemoveAll(p))
		must(t, syscall.Mkfifo(p, 0o600))
	}
	file := func(t *testing.T, p string) {
		must(t, os.RemoveAll(p))
		must(t, os.WriteFile(p, []byte("junk"), 0o600))
	}
	wazeroDir := func(t *testing.T, dir string) string {
		entry, _ := cacheEntry(t, dir)
		return filepath.Dir(entry)
	}
	mark := func(t *testing.T, dir string) string {
		return (&Runtime{cacheDir: dir}).markFile(digestOf(watBytes["start"]))
	}
	for _, c := range []struct {
		name   string
		path   func(*testing.T, string) string
		damage func(*testing.T, string)
		watch  func(*testing.T, string, func())
	}{
		{"wazero's directory a file", wazeroDir, file, notWaitingOn},
		{"wazero's directory a FIFO", wazeroDir, fifo, notWaitingOn},
		{"the module's mark a FIFO", mark, fifo, notWritingTo},
		{"the marks' directory a file", func(t *testing.T, dir string) string { return filepath.Join(dir, markDir) }, file, notWaitingOn},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			runStart(t, cacheRuntime(t, dir))
			p := c.path(t, dir)
			c.damage(t, p)
			c.watch(t, p, func() { runStart(t, cacheRuntime(t, dir)) })
		})
	}
}

// A module that needs more memory than a policy's limit is refused for
// that, with its cause, under a compile cache too: the cache's repair is
// tried under the same limit, so it is not blamed on the cache.
func TestMemoryLimitTooSmallIsNotBlamedOnTheCache(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{CacheDir: t.TempDir()})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	preinitModules(t)
	m, err := rt.Compile(ctx, preinitGuest.reactor)
	must(t, err)
	small := Policy{Mounts: workspace(t), MemoryLimit: 64 << 10}
	_, err = m.Call(ctx, small, abi.Request{ABI: abi.Version, Tool: "probe", CallID: "c", Input: `{}`, Workspace: abi.WorkspaceDir})
	if err == nil || !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "more than the limit of 64 KiB") || strings.Contains(err.Error(), "cache") {
		t.Fatalf("a call under 64 KiB: %v; want the module refused for its memory, not the cache blamed", err)
	}
}

// What a repair left behind when its process died is removed once it is
// an hour old; a repair of another process, in progress, is left alone.
func TestStaleRepairDirectoryIsRemoved(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	stale, fresh := filepath.Join(dir, renewPrefix+"1"), filepath.Join(dir, renewPrefix+"2")
	for _, d := range []string{stale, fresh} {
		must(t, os.MkdirAll(filepath.Join(d, "wazero-x"), 0o700))
	}
	old := time.Now().Add(-staleRenew - time.Minute)
	must(t, os.Chtimes(stale, old, old))
	rt, err := NewRuntime(ctx, Config{CacheDir: dir})
	must(t, err)
	rt.Close(ctx)
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("a repair directory an hour old is still there: %v", err)
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("a repair directory in use was removed: %v", err)
	}
}

// Regression: a module marked as compiled whose file was damaged since
// (a disk that lost a write at a power cut) was repaired, under a small
// memory limit (auto), by compiling it cold in this process, past the
// limit compiling apart is for. The repair is compiled apart, as the
// first compile was, and the module loaded from the file it writes.
func TestDamagedEntryUnderASmallMemoryLimitIsRepairedApart(t *testing.T) {
	for _, d := range entryDamages[:4] { // the files wazero reads and refuses
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			runStart(t, cacheRuntime(t, dir))
			entry, want := cacheEntry(t, dir)
			d.do(t, entry)
			rt := cacheRuntime(t, dir)
			rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
			runStart(t, rt)
			if a, n := rt.apartRuns.Load(), rt.recompiles.Load(); a != 1 || n != 0 {
				t.Errorf("a damaged file under 128 MiB: %d compiles apart and %d in this process, want 1 and 0", a, n)
			}
			entryRewritten(t, entry, want)
		})
	}
}
