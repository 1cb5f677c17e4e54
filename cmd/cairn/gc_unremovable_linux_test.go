package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Regression: cairn gc --dry-run said it would remove what a killed fork
// left on a file system since mounted read-only; cairn gc then removed
// none of it, said nothing of it and exited 0, and dropped the mark of
// the empty workspace the fork made, which no gc found again. Both now
// say, on stderr, which directory cannot be removed and why, and exit 1;
// the marks are kept, and once the file system is read-write again cairn
// gc removes both. A real cairn fork is killed while it fills a
// directory of a tmpfs, which is then remounted read-only.
func TestGCSaysWhatAKilledFillLeftThatItCannotRemove(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("a file system mounted read-only is a tmpfs mounted for the test, which needs root: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	ws := filepath.Join(mnt, "ws")
	left := killWhileFilling(t, exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f", "-w", ws, "v"), mnt)
	must(t, syscall.Mount("", mnt, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))

	for _, dry := range []bool{true, false} {
		args := []string{"gc", "--store", store}
		verb := "could not remove "
		if dry {
			args, verb = append(args, "--dry-run"), "would not be able to remove "
		}
		cmd := exec.Command(bin, args...)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != exitFailed || strings.Count(string(out), "warning: "+verb+left+": ") != 1 ||
			!strings.Contains(string(out), "read-only file system") {
			t.Errorf("cairn %s on a read-only file system: exit %d\n%s\nwant exit 1, saying once that it %s%s and why",
				strings.Join(args, " "), cmd.ProcessState.ExitCode(), out, verb, left)
		}
	}
	must(t, syscall.Mount("", mnt, "", syscall.MS_REMOUNT, ""))
	out, err := exec.Command(bin, "gc", "--store", store).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed "+left+",") || !strings.Contains(string(out), "removed "+ws+",") {
		t.Errorf("cairn gc once the file system is read-write again: %v\n%s\nwant it to remove %s and %s", err, out, left, ws)
	}
	if entries, _ := os.ReadDir(mnt); len(entries) != 0 {
		t.Errorf("%d entries left in %s", len(entries), mnt)
	}
}
