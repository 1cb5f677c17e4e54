//go:build unix

package mcp

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// outputClosed reports whether w, a client's stdout, is a pipe or socket
// whose reader is gone (its end closed: a write would fail), without
// writing to it. A writer that is not a file says nothing.
func outputClosed(w io.Writer) bool {
	f, ok := w.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			closed = fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
		}
	})
	return closed
}
