package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// linuxRemoved is what rawwasi's removed prints of the directory empty,
// asked of Linux: the errno of each step.
func linuxRemoved(t *testing.T) string {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	var b strings.Builder
	fd, err := syscall.Open(filepath.Join(dir, "empty"), syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	fmt.Fprintf(&b, "removed-open %d\n", wasiErrno(err))
	defer syscall.Close(fd)
	fmt.Fprintf(&b, "removed-rmdir %d\n", wasiErrno(syscall.Rmdir(filepath.Join(dir, "empty"))))
	n, err := syscall.Getdents(fd, make([]byte, 256))
	fmt.Fprintf(&b, "removed-readdir %d %d\n", wasiErrno(err), max(n, 0))
	var st syscall.Stat_t
	fmt.Fprintf(&b, "removed-filestat %d\n", wasiErrno(syscall.Fstat(fd, &st)))
	_, err = syscall.Openat(fd, "new.txt", syscall.O_CREAT|syscall.O_RDWR, 0o644)
	fmt.Fprintf(&b, "removed-create %d\n", wasiErrno(err))
	fmt.Fprintf(&b, "removed-mkdir %d\n", wasiErrno(syscall.Mkdirat(fd, "newdir", 0o755)))
	fmt.Fprintf(&b, "removed-remade %d\n", wasiErrno(syscall.Mkdir(filepath.Join(dir, "empty"), 0o755)))
	n, err = syscall.Getdents(fd, make([]byte, 256))
	fmt.Fprintf(&b, "removed-readdir-remade %d %d\n", wasiErrno(err), max(n, 0))
	return b.String()
}

// Regression: fd_readdir of a directory the call had removed, through a
// descriptor opened before, listed "." and ".." on an overlay, where
// getdents(2) of a removed directory is ENOENT, as it was on a plain
// mount; and so did one removed and made again by its name. It is ENOENT
// on both mounts, the directory the workspace's or one the call made, and
// so is making anything in it, as on Linux.
func TestReaddirOfRemovedDirectoryAnswersAsLinux(t *testing.T) {
	want := linuxRemoved(t)
	for _, kind := range mountKinds {
		for _, arg := range []string{"empty", "+made"} {
			ws := t.TempDir()
			must(t, os.Mkdir(filepath.Join(ws, "empty"), 0o755))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"removed", arg}, Mounts: []Mount{mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v: %s", err, stderr.String())
			}
			got := strings.TrimPrefix(stdout.String(), "removed-made 0\n")
			if got != want {
				t.Errorf("%s, %s:\n%s\nLinux says\n%s", kind, arg, got, want)
			}
		}
	}
}
