package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Regression: a fork whose workspace could not be written, its disk full
// or its file system read-only, said to fork as another agent or into
// another directory, as for a directory another process had filled, and
// a resume --workspace said nothing of what to do. Each now says what
// happened to the directory and what to do, and nothing of the fill is
// left. Real cairn fork and resume processes fill a tmpfs too small for
// the workspace, and one mounted read-only.
func TestAFillThatCannotWriteItsWorkspaceSaysWhy(t *testing.T) {
	mount := func(opts string) string {
		t.Helper()
		dir := t.TempDir()
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
			t.Skipf("a full or read-only disk is a tmpfs mounted for the test, which needs root: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
		return dir
	}
	full, readOnly := mount("size=256k"), mount("size=1m")
	must(t, syscall.Mount("", readOnly, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	for _, tc := range []struct {
		name, dir, want string
		args            []string
	}{
		{"fork, disk full", full, "the disk of " + filepath.Join(full, "ws") + " is full: free space on it", []string{"fork", "--as", "f", "-w"}},
		{"resume, disk full", full, "the disk of " + filepath.Join(full, "ws") + " is full: free space on it", []string{"resume", "--cache", cacheForTests(t), "--workspace"}},
		{"fork, read-only", readOnly, "the file system of " + filepath.Join(readOnly, "ws") + " is read-only: mount it read-write", []string{"fork", "--as", "f", "-w"}},
		{"resume, read-only", readOnly, "the file system of " + filepath.Join(readOnly, "ws") + " is read-only: mount it read-write", []string{"resume", "--cache", cacheForTests(t), "--workspace"}},
	} {
		args := append(append([]string{}, tc.args...), filepath.Join(tc.dir, "ws"), "--store", store, "v")
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "fork as another agent") {
			t.Errorf("%s: %v\n%s\nwant it to say %q", tc.name, err, out, tc.want)
		}
		if entries, _ := os.ReadDir(tc.dir); len(entries) != 0 {
			t.Errorf("%s: %d entries left in %s", tc.name, len(entries), tc.dir)
		}
	}
}
