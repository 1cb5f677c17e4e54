package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tools warm said "compiled X into DIR" of a module a read-only compile
// cache could not take the file of, so that a device image shipped with a
// cold cache. It says the module was compiled but not kept, why and what
// to do, and fails; a module such a cache holds already is said to be
// there.
func TestToolsWarmIntoACacheThatCannotKeepTheFileSaysSo(t *testing.T) {
	const module = "../../sandbox/testdata/wasi-testsuite/tests/assemblyscript/testsuite/wasm32-wasip1/fd_write-to-stdout.wasm"
	cache := filepath.Join(t.TempDir(), "cache")
	if code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler"); code != 0 {
		t.Fatalf("tools warm: exit %d, %q, %q", code, out, errOut)
	}
	readOnly(t, cache)
	code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler", module)
	if code == 0 || strings.Contains(out, "compiled "+module+" into") ||
		!strings.Contains(errOut, module) || !strings.Contains(errOut, "could not keep") || !strings.Contains(errOut, "make "+cache+" writable") {
		t.Errorf("tools warm into a read-only cache: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler")
	if code != 0 || !strings.Contains(out, "the built-in tools") || !strings.Contains(out, cache) {
		t.Errorf("tools warm of the built-in tools a read-only cache holds: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// readOnly makes dir and what is in it read-only for the test: a
// read-only bind mount of it as root, whom modes do not stop, else its
// modes.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Getuid() != 0 {
		dirs, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, d := range append(dirs, dir) {
			if err := os.Chmod(d, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(d, 0o700) })
		}
		return
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("a read-only cache is a bind mount made for the test: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("a read-only cache is a bind mount made for the test: %v", err)
	}
}

// So it does of a module a full compile cache could not take the file of.
func TestToolsWarmIntoAFullCacheSaysSo(t *testing.T) {
	const module = "../../sandbox/testdata/wasi-testsuite/tests/assemblyscript/testsuite/wasm32-wasip1/fd_write-to-stdout.wasm"
	cache := t.TempDir()
	if err := syscall.Mount("tmpfs", cache, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		t.Skipf("a full cache is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(cache, syscall.MNT_DETACH) })
	if code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler"); code != 0 {
		t.Fatalf("tools warm: exit %d, %q, %q", code, out, errOut)
	}
	f, err := os.Create(filepath.Join(cache, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := f.Write(make([]byte, 4096)); err == nil; _, err = f.Write(make([]byte, 4096)) {
	}
	f.Close()
	code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler", module)
	if code == 0 || !strings.Contains(errOut, "could not keep its file (no space left on device)") || !strings.Contains(errOut, "free space") {
		t.Errorf("tools warm into a full cache: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// With temporary files it could not write either, tools warm into a
// read-only cache said the cache could not keep the module's file because
// "the temporary files cannot tell which they are". It says why the cache
// cannot take a file.
func TestToolsWarmIntoAReadOnlyCacheWithoutTemporaryFilesSaysWhy(t *testing.T) {
	const module = "../../sandbox/testdata/wasi-testsuite/tests/assemblyscript/testsuite/wasm32-wasip1/fd_write-to-stdout.wasm"
	cache := filepath.Join(t.TempDir(), "cache")
	if code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler"); code != 0 {
		t.Fatalf("tools warm: exit %d, %q, %q", code, out, errOut)
	}
	readOnly(t, cache)
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	code, out, errOut := cairn(t, "tools", "warm", "--cache", cache, "--engine", "compiler", module)
	if code == 0 || !strings.Contains(errOut, "could not keep its file (") || strings.Contains(errOut, "cannot tell") ||
		!strings.Contains(errOut, "read-only file system") && !strings.Contains(errOut, "permission denied") {
		t.Errorf("tools warm into a read-only cache, without temporary files: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
