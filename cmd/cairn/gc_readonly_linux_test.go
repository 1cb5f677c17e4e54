package main

import (
	"strings"
	"syscall"
	"testing"
)

// gc of a store on a read-only file system cannot lock its agents. It
// once said only that an agent could not be read, and to restore it from
// a backup, of an agent that was whole; its error now says why (the
// file system is read-only) and what to do about that.
func TestGCOfAReadOnlyStoreSaysWhy(t *testing.T) {
	store := t.TempDir()
	if err := syscall.Mount("tmpfs", store, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("a read-only store is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(store, syscall.MNT_DETACH) })
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "whole", "-f", crashAgent(t)); code != exitDone {
		t.Fatalf("run: exit %d %s", code, errOut)
	}
	must(t, syscall.Mount("tmpfs", store, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))
	code, _, errOut := cairn(t, "gc", "--store", store)
	if code != exitFailed || !strings.Contains(errOut, "gc could not lock or read agent whole (lock agent") ||
		!strings.Contains(errOut, "read-only file system), so it removed no blob") ||
		!strings.Contains(errOut, "if its files may not be opened or written here (a read-only store") {
		t.Fatalf("gc of a read-only store: exit %d, stderr %s", code, errOut)
	}
	must(t, syscall.Mount("tmpfs", store, "tmpfs", syscall.MS_REMOUNT, ""))
	if code, out, errOut := cairn(t, "show", "--store", store, "whole"); code != exitDone || !strings.Contains(out, "done") {
		t.Fatalf("show after gc: exit %d %s\n%s", code, errOut, out)
	}
}
